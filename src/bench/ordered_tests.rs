//! The push ordered consumer's protocol rules, frame by frame (no server).

use super::*;

const INBOX: &str = "_INBOX.natsplanTo0.";

fn state(start: u64, n: u64, filter: &str) -> OrderedState {
    let share = Share {
        stream: "S".into(),
        filter: filter.into(),
        start,
        n,
    };
    OrderedState::new(
        share,
        INBOX.into(),
        "$JS.API".into(),
        "natsplan-T-c0".into(),
        Duration::from_secs(1),
    )
}

/// A data message of generation `generation` at stream sequence `sseq`, consumer sequence `dseq`, in
/// the server's v2 ack layout.
fn data(st: &mut OrderedState, generation: u64, sseq: u64, dseq: u64, out: &mut Vec<u8>) -> bool {
    let reply = format!("$JS.ACK._.hash.S.natsplan-T-c0-g{generation}.1.{sseq}.{dseq}.1700000000.0");
    st.frame(
        Frame::Msg {
            subject: b"x",
            sid: DELIVER_SID + generation,
            reply: reply.as_bytes(),
            headers: b"",
            payload: b"hello",
        },
        out,
    )
}

fn control(st: &mut OrderedState, generation: u64, reply: &str, headers: &str, out: &mut Vec<u8>) -> bool {
    st.frame(
        Frame::Msg {
            subject: b"x",
            sid: DELIVER_SID + generation,
            reply: reply.as_bytes(),
            headers: headers.as_bytes(),
            payload: b"",
        },
        out,
    )
}

fn api(st: &mut OrderedState, subject: &str, body: &str) {
    let mut out = Vec::new();
    st.frame(
        Frame::Msg {
            subject: subject.as_bytes(),
            sid: API_SID,
            reply: b"",
            headers: b"",
            payload: body.as_bytes(),
        },
        &mut out,
    );
}

/// The JSON body of the consumer create request in `out` (the last one).
fn create_config(out: &[u8]) -> (String, serde_json::Value) {
    let text = String::from_utf8_lossy(out).to_string();
    let at = text.rfind("PUB $JS.API.CONSUMER.CREATE.").expect("a create request");
    let mut lines = text[at..].split("\r\n");
    let head = lines.next().unwrap().to_string();
    let body: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    (head, body)
}

#[test]
fn ack_replies_give_stream_and_consumer_sequences_in_both_layouts() {
    assert_eq!(ack_seqs(b"$JS.ACK.ORDERS.c1.1.42.7.1700000000.99"), Some((42, 7)));
    assert_eq!(ack_seqs(b"$JS.ACK._.AbC.ORDERS.c1.1.42.7.1700000000.99"), Some((42, 7)));
    assert_eq!(
        ack_seqs(b"$JS.ACK.hub.AbC.ORDERS.c1.1.42.7.1700000000.99.tok"),
        Some((42, 7))
    );
    for bad in [
        &b"_INBOX.x.y"[..],
        b"$JS.ACK.S.c.1.2",
        b"$JS.ACK.S.c.1.x.7.1.0",
        b"$JS.FC.S.c.1.2.3.4.5",
        b"",
    ] {
        assert_eq!(ack_seqs(bad), None, "{}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn headers_are_found_by_name_whatever_the_case() {
    let h = b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 12\r\nnats-last-stream: 40\r\n\r\n";
    assert_eq!(header(h, "Nats-Last-Consumer"), Some(&b"12"[..]));
    assert_eq!(header(h, "Nats-Last-Stream"), Some(&b"40"[..]));
    assert_eq!(header(h, "Nats-Consumer-Stalled"), None);
    // The status line is not a header.
    assert_eq!(header(h, "NATS/1.0 100 Idle Heartbeat"), None);
}

#[test]
fn the_raw_parser_hands_over_a_status_message_s_headers() {
    let hb = "NATS/1.0 100 FlowControl Request\r\n\r\n";
    let wire = format!(
        "HMSG _INBOX.d1 101 $JS.FC.S.c.Ab12 {} {}\r\n{hb}\r\n",
        hb.len(),
        hb.len()
    );
    let (f, used) = raw::parse(wire.as_bytes()).unwrap().unwrap();
    assert_eq!(used, wire.len());
    let mut st = state(1, 10, "");
    let mut out = Vec::new();
    st.start(&mut out);
    out.clear();
    assert!(
        st.frame(f, &mut out),
        "a flow-control request of the current generation is a sign of life"
    );
    assert_eq!(String::from_utf8_lossy(&out), "PUB $JS.FC.S.c.Ab12 0\r\n\r\n");
}

#[test]
fn the_first_consumer_is_a_flow_controlled_push_consumer_from_the_share_s_start() {
    let mut st = state(1001, 10, "orders.eu");
    let mut out = Vec::new();
    st.start(&mut out);
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(
        text.starts_with(&format!("SUB {INBOX}r.* 1\r\nSUB {INBOX}d1 101\r\n")),
        "{text}"
    );
    let (head, body) = create_config(&out);
    assert_eq!(
        head.split(' ').take(3).collect::<Vec<_>>(),
        [
            "PUB",
            "$JS.API.CONSUMER.CREATE.S.natsplan-T-c0-g1",
            &format!("{INBOX}r.c1")
        ]
    );
    let c = &body["config"];
    assert_eq!(body["stream_name"], "S");
    assert_eq!(c["deliver_subject"], format!("{INBOX}d1"));
    assert_eq!(c["deliver_policy"], "by_start_sequence");
    assert_eq!(c["opt_start_seq"], 1001);
    assert_eq!(c["ack_policy"], "none");
    assert_eq!(c["flow_control"], true);
    assert_eq!(c["idle_heartbeat"], 1_000_000_000u64);
    assert_eq!(
        (c["mem_storage"].clone(), c["num_replicas"].clone()),
        (true.into(), 1.into())
    );
    assert_eq!(c["filter_subject"], "orders.eu");
    assert!(!state(1, 1, "").frame(Frame::Pong, &mut out));
}

#[test]
fn messages_in_order_are_counted_and_the_share_ends_the_read() {
    let mut st = state(5, 3, "");
    let mut out = Vec::new();
    st.start(&mut out);
    api(
        &mut st,
        &format!("{INBOX}r.c1"),
        r#"{"type":"io.nats.jetstream.api.v1.consumer_create_response","name":"x"}"#,
    );
    assert!(st.created);
    out.clear();
    for (sseq, dseq) in [(5, 1), (6, 2), (8, 3), (9, 4)] {
        data(&mut st, 1, sseq, dseq, &mut out);
    }
    assert!(!st.after_buffer(&mut out));
    assert_eq!((st.got, st.bytes, st.next_sseq, st.resets), (3, 15, 9, 0));
    assert!(
        st.done() && out.is_empty(),
        "the 4th message is past the share and ignored"
    );
}

#[test]
fn a_consumer_sequence_gap_resets_the_consumer_after_the_last_message_read() {
    let mut st = state(1, 100, "");
    let mut out = Vec::new();
    st.start(&mut out);
    for (sseq, dseq) in [(1, 1), (2, 2)] {
        data(&mut st, 1, sseq, dseq, &mut out);
    }
    out.clear();
    // dseq 3 is missing: the rest of this buffer is not counted, and the consumer restarts at sseq 3.
    data(&mut st, 1, 4, 4, &mut out);
    data(&mut st, 1, 5, 5, &mut out);
    assert_eq!(st.got, 2);
    assert!(out.is_empty(), "the reset waits for the end of the buffer");
    assert!(st.after_buffer(&mut out));
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(text.starts_with("UNSUB 101\r\n"), "{text}");
    assert!(
        text.contains("PUB $JS.API.CONSUMER.DELETE.S.natsplan-T-c0-g1 "),
        "{text}"
    );
    assert!(text.contains(&format!("SUB {INBOX}d2 102\r\n")), "{text}");
    let (head, body) = create_config(&out);
    assert!(head.contains("CONSUMER.CREATE.S.natsplan-T-c0-g2"), "{head}");
    assert_eq!(body["config"]["opt_start_seq"], 3);
    assert_eq!(body["config"]["deliver_subject"], format!("{INBOX}d2"));
    assert_eq!((st.generation, st.resets), (2, 1));
    // The old generation's leftovers are not counted; the new one starts at consumer sequence 1.
    assert!(!data(&mut st, 1, 6, 6, &mut out));
    assert!(data(&mut st, 2, 3, 1, &mut out));
    data(&mut st, 2, 4, 2, &mut out);
    assert!(!st.after_buffer(&mut out));
    assert_eq!((st.got, st.next_sseq), (4, 5));
}

#[test]
fn a_heartbeat_behind_the_client_s_count_is_a_gap() {
    let mut st = state(1, 100, "");
    let mut out = Vec::new();
    st.start(&mut out);
    data(&mut st, 1, 1, 1, &mut out);
    out.clear();
    let in_step = "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 1\r\nNats-Last-Stream: 1\r\n\r\n";
    assert!(control(&mut st, 1, "", in_step, &mut out));
    assert!(!st.after_buffer(&mut out) && out.is_empty());
    let ahead = "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 3\r\nNats-Last-Stream: 3\r\n\r\n";
    control(&mut st, 1, "", ahead, &mut out);
    assert!(st.after_buffer(&mut out));
    assert_eq!(create_config(&out).1["config"]["opt_start_seq"], 2);
}

#[test]
fn flow_control_owed_is_answered_from_a_request_or_a_stalled_heartbeat() {
    let mut st = state(1, 100, "");
    let mut out = Vec::new();
    st.start(&mut out);
    out.clear();
    control(
        &mut st,
        1,
        "$JS.FC.S.c.ab12",
        "NATS/1.0 100 FlowControl Request\r\n\r\n",
        &mut out,
    );
    let stalled = "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 0\r\n\
                   Nats-Consumer-Stalled: $JS.FC.S.c.cd34\r\n\r\n";
    control(&mut st, 1, "", stalled, &mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "PUB $JS.FC.S.c.ab12 0\r\n\r\nPUB $JS.FC.S.c.cd34 0\r\n\r\n"
    );
    assert_eq!((st.fc_answered, st.got, st.resets), (2, 0, 0));
    // A message with user headers and an empty body is data, not a status.
    let reply = "$JS.ACK.S.c.1.1.1.1.0";
    st.frame(
        Frame::Msg {
            subject: b"x",
            sid: 101,
            reply: reply.as_bytes(),
            headers: b"NATS/1.0\r\nk: v\r\n\r\n",
            payload: b"",
        },
        &mut out,
    );
    assert_eq!(st.got, 1);
}

#[test]
fn a_refused_create_or_a_server_error_ends_the_read_with_the_server_s_words() {
    let mut st = state(1, 10, "");
    let mut out = Vec::new();
    st.start(&mut out);
    // An earlier generation's or a delete's answer is not this create's.
    api(
        &mut st,
        &format!("{INBOX}r.d1"),
        r#"{"error":{"code":404,"description":"consumer not found"}}"#,
    );
    assert!(st.fatal.is_none());
    api(
        &mut st,
        &format!("{INBOX}r.c1"),
        r#"{"type":"x","error":{"code":404,"err_code":10059,"description":"stream not found"}}"#,
    );
    assert_eq!(
        st.fatal.as_deref(),
        Some("creating the ordered consumer on stream S: stream not found")
    );
    assert!(st.done());
    // A cluster that cannot place the consumer yet (a leader election) is tried again, not fatal.
    let mut st = state(1, 10, "");
    st.start(&mut out);
    let busy = r#"{"error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}"#;
    api(&mut st, &format!("{INBOX}r.c1"), busy);
    assert!(st.fatal.is_none() && !st.created && !st.done());
    let mut st = state(1, 10, "");
    st.frame(
        Frame::Err("'Permissions Violation for Subscription to \"_INBOX.x\"'"),
        &mut out,
    );
    assert!(st
        .fatal
        .as_deref()
        .unwrap()
        .starts_with("the server said: 'Permissions Violation"));
}

#[test]
fn the_heartbeat_asked_for_leaves_room_for_a_reset_within_the_timeout() {
    assert_eq!(heartbeat(Duration::from_secs(60)), Duration::from_secs(5));
    assert_eq!(heartbeat(Duration::from_secs(5)), Duration::from_millis(1250));
    assert_eq!(heartbeat(Duration::from_millis(10)), Duration::from_millis(100));
    let st = state(1, 1, "");
    assert_eq!(st.silent_for(), Duration::from_secs(2));
}

#[test]
fn a_reconnection_subscribes_again_and_restarts_after_the_last_message_read() {
    let mut st = state(1, 100, "");
    let mut out = Vec::new();
    st.start(&mut out);
    data(&mut st, 1, 1, 1, &mut out);
    data(&mut st, 1, 2, 2, &mut out);
    out.clear();
    st.restart(&mut out);
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(text.starts_with(&format!("SUB {INBOX}r.* 1\r\n")), "{text}");
    assert!(text.contains("CONSUMER.DELETE.S.natsplan-T-c0-g1 "), "{text}");
    assert!(text.contains(&format!("SUB {INBOX}d2 102\r\n")), "{text}");
    assert_eq!(create_config(&out).1["config"]["opt_start_seq"], 3);
    assert_eq!((st.resets, st.got), (1, 2));
}
