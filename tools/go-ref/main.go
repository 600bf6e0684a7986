// go-ref: the official Go client (nats.go) doing the same work as the rows of `natsplan bench`
// (core 1 publisher / 1 subscriber, JetStream async and sync publishing, KV put and get, object put and
// get, pull fetch, continuous and ordered consumers), so scripts/bench-vs-go can compare rates. One
// client each, timed from its first operation to its last, as natsplan times them; anything a read run
// reads is written before the clock starts. Not part of the crate and not on CI's required path. Prints
// one JSON line per run.
//
// Debian's nats.go (1.22) has the legacy JetStream API only, so "consume" is a durable push consumer
// with a callback and explicit acks (natsplan's is pull-based: the same delivery and ack work by another
// mechanism), and "ordered" the push ordered consumer, which natsplan's `bench consumer ordered --push`
// also reads (its default, natscli's pull ordered consumer, has no counterpart in nats.go 1.22).
//
// Build (GOPATH mode, Debian's golang-go + golang-github-nats-io-go-nats-dev):
//   GOPATH=/usr/share/gocode GO111MODULE=off go build -o go-ref tools/go-ref/main.go
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "go-ref: "+format+"\n", a...)
	os.Exit(3)
}

func main() {
	servers := flag.String("s", "nats://127.0.0.1:4222", "server URLs, comma separated")
	msgs := flag.Int("n", 100000, "messages")
	size := flag.Int("ms", 128, "payload size")
	replicas := flag.Int("r", 3, "stream replicas (js)")
	window := flag.Int("window", 500, "async publishes in flight (js), messages per fetch or buffered (consumers)")
	flag.Parse()
	if flag.NArg() != 1 {
		die("usage: go-ref [flags] core|js|js-sync|kv-put|kv-get|obj-put|obj-get|fetch|consume|ordered")
	}
	urls := strings.Split(*servers, ",")
	switch flag.Arg(0) {
	case "core":
		core(urls, *msgs, *size)
	case "js":
		js(urls, *msgs, *size, *replicas, *window)
	case "js-sync":
		jsSync(urls, *msgs, *size, *replicas)
	case "kv-put", "kv-get":
		kv(urls, flag.Arg(0) == "kv-get", *msgs, *size, *replicas)
	case "obj-put", "obj-get":
		obj(urls, flag.Arg(0) == "obj-get", *msgs, *size, *replicas)
	case "fetch", "consume", "ordered":
		consumer(urls, flag.Arg(0), *msgs, *size, *replicas, *window)
	default:
		die("unknown mode %q", flag.Arg(0))
	}
}

// jsContext: a connection to the first server and a JetStream context with up to window publishes in
// flight.
func jsContext(urls []string, window int) (*nats.Conn, nats.JetStreamContext) {
	nc, err := nats.Connect(urls[0])
	if err != nil {
		die("connect: %v", err)
	}
	ctx, err := nc.JetStream(nats.PublishAsyncMaxPending(window))
	if err != nil {
		die("jetstream: %v", err)
	}
	return nc, ctx
}

// retry: asset creation on a fresh cluster may meet a meta leader not elected yet.
func retry(what string, f func() error) {
	for i := 0; ; i++ {
		err := f()
		if err == nil {
			return
		}
		if i > 40 {
			die("%s: %v", what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// fill: n messages of size bytes on subject(i), async with up to 512 in flight, all acknowledged.
func fill(ctx nats.JetStreamContext, n, size int, subject func(int) string) {
	payload := make([]byte, size)
	for i := 0; i < n; i++ {
		if _, err := ctx.PublishAsync(subject(i), payload); err != nil {
			die("fill: %v", err)
		}
	}
	select {
	case <-ctx.PublishAsyncComplete():
	case <-time.After(120 * time.Second):
		die("fill: acks did not complete")
	}
}

func report(kind string, n, size int, el float64) {
	fmt.Printf("{\"kind\":%q,\"msgs\":%d,\"size\":%d,\"msgs_per_s\":%f}\n", kind, n, size, float64(n)/el)
}

func stream(ctx nats.JetStreamContext, replicas int) (string, string) {
	name := fmt.Sprintf("natsplan-goref-%d", os.Getpid())
	subject := fmt.Sprintf("natsplan.goref.%d", os.Getpid())
	cfg := &nats.StreamConfig{Name: name, Subjects: []string{subject}, Replicas: replicas, Storage: nats.FileStorage}
	retry("add stream", func() error { _, err := ctx.AddStream(cfg); return err })
	return name, subject
}

// jsSync: one publisher waiting for each ack.
func jsSync(urls []string, n, size, replicas int) {
	nc, ctx := jsContext(urls, 1)
	defer nc.Close()
	name, subject := stream(ctx, replicas)
	defer ctx.DeleteStream(name)
	payload := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := ctx.Publish(subject, payload); err != nil {
			die("publish: %v", err)
		}
	}
	report("js-sync", n, size, time.Since(start).Seconds())
}

// kv: one client putting keys (or getting the keys put before the clock).
func kv(urls []string, get bool, n, size, replicas int) {
	nc, ctx := jsContext(urls, 512)
	defer nc.Close()
	bucket := fmt.Sprintf("natsplan-goref-%d", os.Getpid())
	var kv nats.KeyValue
	retry("create bucket", func() error {
		var err error
		kv, err = ctx.CreateKeyValue(&nats.KeyValueConfig{Bucket: bucket, Replicas: replicas, Storage: nats.FileStorage})
		return err
	})
	defer ctx.DeleteKeyValue(bucket)
	payload := make([]byte, size)
	kind := "kv-put"
	if get {
		kind = "kv-get"
		fill(ctx, n, size, func(i int) string { return fmt.Sprintf("$KV.%s.k%d", bucket, i) })
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("k%d", i)
		if get {
			e, err := kv.Get(key)
			if err != nil || len(e.Value()) != size {
				die("get %s: %v", key, err)
			}
		} else if _, err := kv.Put(key, payload); err != nil {
			die("put: %v", err)
		}
	}
	report(kind, n, size, time.Since(start).Seconds())
}

// obj: one client putting whole objects (or getting the objects put before the clock).
func obj(urls []string, get bool, n, size, replicas int) {
	nc, ctx := jsContext(urls, 512)
	defer nc.Close()
	bucket := fmt.Sprintf("natsplan-goref-%d", os.Getpid())
	var obs nats.ObjectStore
	retry("create object store", func() error {
		var err error
		obs, err = ctx.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: bucket, Replicas: replicas, Storage: nats.FileStorage})
		return err
	})
	defer ctx.DeleteObjectStore(bucket)
	data := make([]byte, size)
	for i := range data {
		data[i] = 0x5a
	}
	kind := "obj-put"
	if get {
		kind = "obj-get"
		for i := 0; i < n; i++ {
			if _, err := obs.PutBytes(fmt.Sprintf("o%d", i), data); err != nil {
				die("put: %v", err)
			}
		}
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("o%d", i)
		if get {
			b, err := obs.GetBytes(name)
			if err != nil || len(b) != size {
				die("get %s: %v", name, err)
			}
		} else if _, err := obs.PutBytes(name, data); err != nil {
			die("put: %v", err)
		}
	}
	report(kind, n, size, time.Since(start).Seconds())
}

// consumer: one client reading n messages written before the clock: fetch (durable pull, batches of
// window, each acked), consume (durable push with a callback, each acked), ordered (no acks).
func consumer(urls []string, mode string, n, size, replicas, window int) {
	nc, ctx := jsContext(urls, 512)
	defer nc.Close()
	name, subject := stream(ctx, replicas)
	defer ctx.DeleteStream(name)
	fill(ctx, n, size, func(int) string { return subject })
	var got int64
	done := make(chan struct{})
	var start time.Time
	switch mode {
	case "fetch":
		sub, err := ctx.PullSubscribe(subject, "goref", nats.BindStream(name), nats.MaxAckPending(2*window))
		if err != nil {
			die("pull subscribe: %v", err)
		}
		start = time.Now()
		for got < int64(n) {
			want := window
			if left := n - int(got); left < want {
				want = left
			}
			ms, err := sub.Fetch(want, nats.MaxWait(5*time.Second))
			if err != nil {
				die("fetch after %d: %v", got, err)
			}
			for _, m := range ms {
				m.Ack()
				got++
			}
		}
		close(done)
	default:
		// consume: timed from the first message, as the durable is created by Subscribe itself (natsplan
		// creates its durables before the clock). ordered: timed from before Subscribe, which creates the
		// consumer, as natscli's `nats bench oldjs ordered` times it and natsplan's `ordered --push` does
		// (a push consumer starts pushing once it exists, so neither side can create it before the clock).
		var first sync.Once
		if mode == "ordered" {
			start = time.Now()
		}
		cb := func(m *nats.Msg) {
			if mode == "consume" {
				first.Do(func() { start = time.Now() })
			}
			if mode == "consume" {
				m.Ack()
			}
			if atomic.AddInt64(&got, 1) == int64(n) {
				close(done)
			}
		}
		opts := []nats.SubOpt{nats.BindStream(name), nats.OrderedConsumer()}
		if mode == "consume" {
			opts = []nats.SubOpt{nats.BindStream(name), nats.Durable("goref"), nats.ManualAck(), nats.AckExplicit(), nats.MaxAckPending(2 * window)}
		}
		sub, err := ctx.Subscribe(subject, cb, opts...)
		if err != nil {
			die("subscribe: %v", err)
		}
		sub.SetPendingLimits(-1, -1)
		defer sub.Unsubscribe()
	}
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		die("read %d of %d", atomic.LoadInt64(&got), n)
	}
	report(mode, n, size, time.Since(start).Seconds())
}

// core: subscriber on the first server, publisher on the next (as natsplan spreads them), nats-bench's
// aggregate: published + received over first publish -> last receipt.
func core(urls []string, n, size int) {
	subject := fmt.Sprintf("natsplan.goref.%d", os.Getpid())
	sc, err := nats.Connect(urls[0])
	if err != nil {
		die("connect: %v", err)
	}
	pc, err := nats.Connect(urls[1%len(urls)])
	if err != nil {
		die("connect: %v", err)
	}
	var received int64
	done := make(chan time.Time, 1)
	var firstRecv time.Time
	sub, err := sc.Subscribe(subject, func(m *nats.Msg) {
		c := atomic.AddInt64(&received, 1)
		if c == 1 {
			firstRecv = time.Now()
		}
		if c == int64(n) {
			done <- time.Now()
		}
	})
	if err != nil {
		die("subscribe: %v", err)
	}
	sub.SetPendingLimits(-1, -1)
	sc.Flush()
	// Wait until the publisher's server knows the interest (route propagation).
	probe := subject + ".probe"
	psub, _ := sc.Subscribe(probe, func(m *nats.Msg) { m.Respond(nil) })
	sc.Flush()
	for i := 0; ; i++ {
		if _, err := pc.Request(probe, nil, 250*time.Millisecond); err == nil {
			break
		}
		if i > 40 {
			die("subscriber interest never reached the publisher's server")
		}
		time.Sleep(20 * time.Millisecond)
	}
	psub.Unsubscribe()
	payload := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		pc.Publish(subject, payload)
	}
	pc.Flush()
	pubEnd := time.Now()
	// Stop waiting once messages stop arriving (a slow-consumer cut-off drops the rest).
	var end time.Time
	last := int64(-1)
wait:
	for {
		select {
		case end = <-done:
			break wait
		case <-time.After(5 * time.Second):
			now := atomic.LoadInt64(&received)
			if now == last {
				die("subscriber got %d of %d (slow consumer cut-off)", now, n)
			}
			last = now
		}
	}
	_ = firstRecv
	window := end.Sub(start).Seconds()
	fmt.Printf("{\"kind\":\"core\",\"msgs\":%d,\"size\":%d,\"aggregate_msgs_per_s\":%f,\"pub_msgs_per_s\":%f}\n",
		n, size, float64(2*n)/window, float64(n)/pubEnd.Sub(start).Seconds())
	sc.Close()
	pc.Close()
}

// js: one async publisher with a bounded in-flight window on a fresh R-replica file stream;
// rate = acked / (first publish -> last ack).
func js(urls []string, n, size, replicas, window int) {
	nc, err := nats.Connect(urls[0])
	if err != nil {
		die("connect: %v", err)
	}
	ctx, err := nc.JetStream(nats.PublishAsyncMaxPending(window))
	if err != nil {
		die("jetstream: %v", err)
	}
	name := fmt.Sprintf("natsplan-goref-%d", os.Getpid())
	subject := fmt.Sprintf("natsplan.goref.%d", os.Getpid())
	cfg := &nats.StreamConfig{Name: name, Subjects: []string{subject}, Replicas: replicas, Storage: nats.FileStorage}
	for i := 0; ; i++ {
		if _, err = ctx.AddStream(cfg); err == nil {
			break
		}
		if i > 40 {
			die("add stream: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	defer ctx.DeleteStream(name)
	payload := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := ctx.PublishAsync(subject, payload); err != nil {
			die("publish: %v", err)
		}
	}
	select {
	case <-ctx.PublishAsyncComplete():
	case <-time.After(60 * time.Second):
		die("acks did not complete")
	}
	el := time.Since(start).Seconds()
	fmt.Printf("{\"kind\":\"js\",\"msgs\":%d,\"size\":%d,\"msgs_per_s\":%f}\n", n, size, float64(n)/el)
}
