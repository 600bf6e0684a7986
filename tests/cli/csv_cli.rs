//! `--format csv` for design, whatif and simulate: one header row naming the documented columns, every
//! record as wide as the header, RFC 4180 quoting (read back by an independent parser here).

use crate::common::run;

fn example(name: &str) -> String {
    crate::common::repo_file(&format!("examples/{name}.yaml"))
}

/// RFC 4180 records: fields split on commas outside quotes, `""` inside quotes is a quote, records end
/// in CRLF (a bare LF inside quotes is data).
fn parse(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut rec = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => rec.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF");
                rec.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut rec));
            }
            (false, '\n') => panic!("a record ends in a bare LF, not CRLF"),
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted, "an unterminated quote");
    assert!(field.is_empty() && rec.is_empty(), "the last record has no CRLF");
    records
}

fn csv(args: &[&str]) -> Vec<Vec<String>> {
    let mut all = vec!["--format", "csv"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "natsplan {args:?}: {err}");
    let recs = parse(&out);
    assert!(recs.len() >= 2, "a header and at least one record: {out}");
    for r in &recs {
        assert_eq!(r.len(), recs[0].len(), "a record as wide as the header: {r:?}");
    }
    recs
}

/// Every column the CSV names is documented in docs/reports.md.
fn documented(header: &[String]) {
    let docs = std::fs::read_to_string(crate::common::repo_file("docs/reports.md")).unwrap();
    for col in header {
        assert!(
            docs.contains(&format!("`{col}`")),
            "column {col} is not in docs/reports.md"
        );
    }
}

#[test]
fn design_csv_has_one_record_per_layout_and_quotes_its_reasons() {
    let recs = csv(&["design", &example("three-racks-raid1")]);
    documented(&recs[0]);
    assert_eq!(&recs[0][..3], ["rank", "id", "verdict"]);
    let json: serde_json::Value =
        serde_json::from_str(&run(&["--format", "json", "design", &example("three-racks-raid1")]).1).unwrap();
    let layouts = json["layouts"].as_array().unwrap();
    assert_eq!(recs.len() - 1, layouts.len());
    let col = |name: &str| recs[0].iter().position(|c| c == name).unwrap();
    for (r, l) in recs[1..].iter().zip(layouts) {
        assert_eq!(r[col("id")], l["id"].as_str().unwrap());
        assert_eq!(r[col("needed_bytes")], l["capacity"]["needed_bytes"].to_string());
        assert_eq!(r[col("tolerates_racks")], l["tolerates"]["racks"].to_string());
        // The reasons field holds commas: read back whole.
        let reasons: Vec<&str> = l["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(r[col("reasons")], reasons.join("; "));
    }
    assert!(
        recs[1..].iter().any(|r| r[col("reasons")].contains(',')),
        "a reason with a comma to quote"
    );
    // --top applies.
    assert_eq!(csv(&["design", &example("three-racks-raid1"), "--top", "1"]).len(), 2);
    // Servers left out, with their roles.
    let five = csv(&["design", &example("seed-five-servers-raid0")]);
    let u = five[0].iter().position(|c| c == "unused_servers").unwrap();
    assert!(five[1..].iter().any(|r| r[u].contains(":standby")), "{five:?}");
}

#[test]
fn whatif_csv_has_one_record_per_scenario_and_asset() {
    let recs = csv(&["whatif", &example("three-racks-raid1"), "--fail", "rack:A"]);
    documented(&recs[0]);
    let json: serde_json::Value = serde_json::from_str(
        &run(&[
            "--format",
            "json",
            "whatif",
            &example("three-racks-raid1"),
            "--fail",
            "rack:A",
        ])
        .1,
    )
    .unwrap();
    let sc = &json["scenarios"][0];
    assert_eq!(recs.len() - 1, 1 + sc["streams"].as_array().unwrap().len());
    assert_eq!(recs[1][recs[0].iter().position(|c| c == "asset").unwrap()], "meta");
    assert!(recs[1..].iter().all(|r| r[1] == "rack:A"));
    let sweep = csv(&["whatif", &example("three-racks-raid1"), "--all", "1"]);
    let combos = sweep[0].iter().position(|c| c == "combinations").unwrap();
    assert!(
        sweep[1..].iter().any(|r| r[combos].parse::<u64>().unwrap() > 1),
        "{sweep:?}"
    );
}

#[test]
fn simulate_csv_lists_every_asset_with_its_interval() {
    let recs = csv(&["simulate", &example("three-racks-raid1"), "--trials", "2000"]);
    documented(&recs[0]);
    let json: serde_json::Value = serde_json::from_str(
        &run(&[
            "--format",
            "json",
            "simulate",
            &example("three-racks-raid1"),
            "--trials",
            "2000",
        ])
        .1,
    )
    .unwrap();
    let assets = json["monte_carlo"]["assets"].as_array().unwrap();
    assert_eq!(recs.len() - 1, 1 + assets.len(), "the meta group and every asset");
    let col = |name: &str| recs[0].iter().position(|c| c == name).unwrap();
    for r in &recs[1..] {
        let (lo, x, hi): (f64, f64, f64) = (
            r[col("unavailable_ci95_low")].parse().unwrap(),
            r[col("unavailable_min_per_year")].parse().unwrap(),
            r[col("unavailable_ci95_high")].parse().unwrap(),
        );
        assert!(lo <= x && x <= hi, "{r:?}");
        assert!(
            !r[col("exact_unavailable_min_per_year")].is_empty(),
            "the chain runs on this site"
        );
    }
}

#[test]
fn csv_is_refused_where_it_is_not_offered() {
    let (code, _, err) = run(&["--format", "csv", "predict", "--kind", "js"]);
    assert_eq!(code, 2);
    assert!(err.contains("not available for `predict`"), "{err}");
}
