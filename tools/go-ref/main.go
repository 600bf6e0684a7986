// go-ref: the official Go client (nats.go) doing the same work as `natsplan bench core` (1 publisher,
// 1 subscriber) and `natsplan bench js --publish async`, so scripts/bench-vs-go can compare rates.
// Not part of the crate and not on CI's required path. Prints one JSON line per run.
//
// Build (GOPATH mode, Debian's golang-go + golang-github-nats-io-go-nats-dev):
//   GOPATH=/usr/share/gocode GO111MODULE=off go build -o go-ref tools/go-ref/main.go
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
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
	window := flag.Int("window", 500, "async publishes in flight (js)")
	flag.Parse()
	if flag.NArg() != 1 {
		die("usage: go-ref [flags] core|js")
	}
	urls := strings.Split(*servers, ",")
	switch flag.Arg(0) {
	case "core":
		core(urls, *msgs, *size)
	case "js":
		js(urls, *msgs, *size, *replicas, *window)
	default:
		die("unknown mode %q", flag.Arg(0))
	}
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
