//! One case per class of site-file problem: each asserts where it is reported (line and column of the
//! offending key or value), the field path, what is said and the fix. Also: all problems come at once,
//! the rendered report is stable, and R2/R4 and other legal-but-odd inputs are accepted.

use natsplan::catalog::Catalog;
use natsplan::input::{InputError, InputErrors};
use natsplan::site::{parse_str, ArrayRaid, Site};

fn parse(text: &str) -> Result<Site, InputErrors> {
    parse_str(text, "site.yaml", &Catalog::builtin())
}

fn problems(text: &str) -> Vec<InputError> {
    match parse(text) {
        Ok(_) => panic!("expected problems, the site parsed:\n{text}"),
        Err(e) => {
            assert!(!e.errors.is_empty());
            e.errors
        }
    }
}

/// The one problem at `path` (fails listing all problems when there is none or more than one).
fn at_path<'a>(errs: &'a [InputError], path: &str) -> &'a InputError {
    let hits: Vec<&InputError> = errs.iter().filter(|e| e.path == path).collect();
    assert_eq!(hits.len(), 1, "expected one problem at {path}, got: {errs:#?}");
    hits[0]
}

/// Assert the problem is reported at the first occurrence of `needle` on 1-based `line` of `text`.
fn assert_at(e: &InputError, text: &str, line: usize, needle: &str) {
    let src = text.lines().nth(line - 1).unwrap_or_else(|| panic!("no line {line}"));
    let col = src
        .find(needle)
        .unwrap_or_else(|| panic!("'{needle}' not on line {line}: {src}"))
        + 1;
    assert_eq!(
        (e.line, e.column),
        (Some(line), Some(col)),
        "{e:#?} should point at '{needle}' on line {line}: {src}"
    );
}

/// Assert the problem is reported right after the first occurrence of `before` on `line`.
fn assert_after(e: &InputError, text: &str, line: usize, before: &str) {
    let src = text.lines().nth(line - 1).unwrap_or_else(|| panic!("no line {line}"));
    let col = src
        .find(before)
        .unwrap_or_else(|| panic!("'{before}' not on line {line}: {src}"))
        + before.len()
        + 1;
    assert_eq!(
        (e.line, e.column),
        (Some(line), Some(col)),
        "{e:#?} should follow '{before}': {src}"
    );
}

fn assert_says(e: &InputError, message: &str, fix: &str) {
    assert!(e.message.contains(message), "message {:?} lacks {message:?}", e.message);
    let f = e.fix.as_deref().unwrap_or("");
    assert!(f.contains(fix), "fix {f:?} lacks {fix:?} (message {:?})", e.message);
}

/// A small valid site; cases edit one line of it so positions stay easy to read.
const BASE: &str = "\
site: t
nats: { replicas: [3] }
racks:
  - name: A
    servers: [a1, a2]
    arrays:
      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 5, hot_spares: 1 }
  - name: B
    servers: [b1]
    arrays:
      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }
workload:
  streams:
    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h }
";

/// BASE with 1-based line `n` replaced.
fn with_line(n: usize, new: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[n - 1] = new;
    lines.join("\n") + "\n"
}

#[test]
fn base_is_valid() {
    let s = parse(BASE).unwrap();
    assert_eq!(s.servers.len(), 3);
    assert_eq!(s.arrays.len(), 2);
}

// ---- YAML itself ----

#[test]
fn yaml_syntax_error_has_a_place_and_a_fix() {
    let t = with_line(5, "    servers: [a1, a2");
    let e = problems(&t);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].line.is_some() && e[0].column.is_some(), "{e:#?}");
    assert!(e[0].message.starts_with("YAML syntax:"), "{e:#?}");
    assert!(e[0].fix.is_some());
}

#[test]
fn tab_indentation_says_use_spaces() {
    let t = with_line(5, "\tservers: [a1, a2]");
    let e = problems(&t);
    assert_eq!(e[0].line, Some(5), "{e:#?}");
    assert_says(&e[0], "YAML syntax", "indent with spaces");
}

#[test]
fn empty_file_and_second_document() {
    let e = problems("# nothing here\n");
    assert_says(&e[0], "empty", "examples/full-reference.yaml");
    let t = format!("{BASE}---\nsite: other\n");
    let e = problems(&t);
    assert_eq!(e[0].line, Some(15));
    assert_says(&e[0], "second YAML document", "own file");
}

#[test]
fn top_level_must_be_a_mapping() {
    let e = problems("- just\n- a list\n");
    assert_eq!((e[0].line, e[0].column), (Some(1), Some(1)));
    assert_says(&e[0], "expected the site as a mapping", "site, nats, racks");
}

// ---- keys ----

#[test]
fn unknown_key_suggests_the_nearest() {
    let l = "      - { name: A1, model: EF300, disk_modle: nvme-3.84t, disks: 5, hot_spares: 1 }";
    let t = with_line(7, l);
    let errs = problems(&t);
    // The misspelt key is the only problem: no second "missing disk_model" for the same mistake.
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let e = at_path(&errs, "racks[0].arrays[0].disk_modle");
    assert_at(e, &t, 7, "disk_modle");
    assert_eq!(e.message, "unknown key 'disk_modle'; did you mean 'disk_model'?");
    assert_says(e, "", "rename it to 'disk_model'");
}

#[test]
fn unknown_key_from_another_section_says_where_it_belongs() {
    let t = with_line(4, "  - name: A\n    replicas: 3");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[0].replicas");
    assert_at(e, &t, 5, "replicas");
    assert_says(e, "unknown key 'replicas'", "belongs in nats");
}

#[test]
fn unknown_key_without_a_near_name_lists_the_allowed_keys() {
    let t = with_line(1, "site: t\ncolour: blue");
    let errs = problems(&t);
    let e = at_path(&errs, "colour");
    assert_at(e, &t, 2, "colour");
    assert_says(e, "unknown key 'colour'", "site, nats, racks, workload, policy");
}

#[test]
fn duplicate_key() {
    let t = with_line(2, "nats: { replicas: [3], replicas: [5] }");
    let errs = problems(&t);
    let e = at_path(&errs, "nats.replicas");
    assert_at(e, &t, 2, "replicas: [5]");
    assert_says(e, "key 'replicas' is given twice (first on line 2)", "keep one");
}

#[test]
fn missing_required_keys_point_at_their_mapping() {
    let t = with_line(1, "# no site name");
    let errs = problems(&t);
    let e = at_path(&errs, "site");
    assert_eq!((e.line, e.column), (Some(2), Some(1)), "{e:#?}");
    assert_says(e, "missing key 'site'", "add `site: east-dc`");

    let t = with_line(7, "      - { name: A1, disk_model: nvme-3.84t, disks: 5 }");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[0].arrays[0].model");
    assert_at(e, &t, 7, "{ name");
    assert_says(e, "missing key 'model'", "add `model: EF300`");
}

// ---- types ----

#[test]
fn wrong_type_says_what_was_expected() {
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: fast, msg_size: 1KiB, retention: 24h }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "workload.streams[0].msgs_per_s");
    assert_at(e, &t, 14, "fast");
    assert_says(
        e,
        "expected a number (messages per second), got the text 'fast'",
        "plain number",
    );
}

#[test]
fn whole_numbers_negative_and_huge() {
    let t = with_line(
        11,
        "      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3.5, hot_spares: -1 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].disks");
    assert_at(e, &t, 11, "3.5");
    assert_says(e, "expected a whole number (a disk count), got the number 3.5", "3");
    let e = at_path(&errs, "racks[1].arrays[0].hot_spares");
    assert_at(e, &t, 11, "-1");
    assert_says(e, "hot spares cannot be negative, got -1", "1");

    let t = with_line(
        11,
        "      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 99999999999999999999999 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].disks");
    assert_says(e, "far too large", "3");
}

#[test]
fn lists_and_mappings_in_the_wrong_place() {
    let t = with_line(5, "    servers: { a1: yes }");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[0].servers");
    assert_at(e, &t, 5, "{ a1");
    assert_says(e, "expected a list, got a mapping", "- item");
}

#[test]
fn booleans_are_yaml_1_2_booleans() {
    let t = with_line(
        11,
        "      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, write_cache: yes }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].write_cache");
    assert_at(e, &t, 11, "yes");
    assert_says(e, "expected true or false, got the text 'yes'", "write true or false");
}

// ---- models ----

#[test]
fn unknown_disk_model_suggests_the_nearest() {
    let t = with_line(
        7,
        "      - { name: A1, model: EF300, disk_model: nvme-3.8t, disks: 5, hot_spares: 1 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[0].arrays[0].disk_model");
    assert_at(e, &t, 7, "nvme-3.8t");
    assert_eq!(e.message, "unknown disk model 'nvme-3.8t'; did you mean 'nvme-3.84t'?");
    assert_says(e, "", "write nvme-3.84t; known disk models: nvme-1.92t");
}

#[test]
fn unknown_array_and_server_models() {
    let t = with_line(
        7,
        "      - { name: A1, model: EF-300, disk_model: nvme-3.84t, disks: 5, hot_spares: 1 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[0].arrays[0].model");
    assert_at(e, &t, 7, "EF-300");
    assert_says(
        e,
        "unknown array model 'EF-300'; did you mean 'EF300'?",
        "EF600, EF300, E5700, E4000",
    );

    let t = with_line(9, "    servers: [{ name: b1, model: supermicro }]");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].servers[0].model");
    assert_at(e, &t, 9, "supermicro");
    assert_says(e, "unknown server model 'supermicro'", "generic-16c");
    assert_says(e, "", "--models DIR");
}

// ---- names ----

#[test]
fn duplicate_names_of_every_kind() {
    // racks
    let t = with_line(8, "  - name: a");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].name");
    assert_after(e, &t, 8, "name: ");
    assert_says(e, "duplicate rack name 'a' (first on line 4)", "unique name");
    // servers, across racks
    let t = with_line(9, "    servers: [a2]");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].servers[0]");
    assert_at(e, &t, 9, "a2");
    assert_says(
        e,
        "duplicate server name 'a2' (first on line 5, another rack)",
        "unique name",
    );
    // arrays
    let t = with_line(
        11,
        "      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].name");
    assert_at(e, &t, 11, "A1");
    assert_says(e, "duplicate array name 'A1'", "unique name");
    // assets: a KV bucket named like a stream
    let t = format!("{BASE}  kv: [{{ name: orders, puts_per_s: 1, value_size: 1KiB, keys: 10 }}]\n");
    let errs = problems(&t);
    let e = at_path(&errs, "workload.kv[0].name");
    assert_at(e, &t, 15, "orders");
    assert_says(
        e,
        "duplicate asset name 'orders' (first on line 14)",
        "all streams in nats-server",
    );
}

#[test]
fn names_must_be_usable_as_identifiers() {
    let t = with_line(4, "  - name: Rack A");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[0].name");
    assert_at(e, &t, 4, "Rack A");
    assert_says(e, "rack name 'Rack A' is not usable", "rename it");
    let t = with_line(
        14,
        "    - { name: orders.eu, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "workload.streams[0].name");
    assert_says(e, "'orders.eu' is not a valid name for nats-server", "no spaces, '.'");
}

// ---- the site as a whole ----

#[test]
fn no_racks_no_servers_no_storage() {
    let t = "site: t\nracks: []\n";
    let errs = problems(t);
    let e = at_path(&errs, "racks");
    assert_at(e, t, 2, "[]");
    assert_says(e, "the site has no racks", "add at least one rack");

    let t =
        "site: t\nracks:\n  - name: A\n    arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3 }]\n";
    let errs = problems(t);
    let e = at_path(&errs, "racks");
    assert_at(e, t, 2, "racks");
    assert_says(e, "the site has no servers", "racks[].servers");

    let t = "site: t\nracks:\n  - name: A\n    servers: [a1]\n";
    let errs = problems(t);
    let e = at_path(&errs, "racks");
    assert_says(e, "no storage", "internal disks");
}

// ---- rates, counts and limits ----

#[test]
fn zero_and_negative_rates() {
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 0, msg_size: 1KiB, retention: 24h }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "workload.streams[0].msgs_per_s");
    assert_at(e, &t, 14, "0,");
    assert_says(e, "must be above zero, got 0", "above zero");
    let t = format!(
        "{BASE}  object_stores: [{{ name: blobs, puts_per_s: -2, gets_per_s: -1, object_size: 1MiB, retention: 1h }}]\n"
    );
    let errs = problems(&t);
    assert_says(
        at_path(&errs, "workload.object_stores[0].puts_per_s"),
        "must be above zero, got -2",
        "above zero",
    );
    assert_says(
        at_path(&errs, "workload.object_stores[0].gets_per_s"),
        "cannot be negative",
        "0 or more",
    );
}

#[test]
fn replicas_outside_1_to_5() {
    let t = with_line(2, "nats: { replicas: [3, 7] }");
    let errs = problems(&t);
    let e = at_path(&errs, "nats.replicas[1]");
    assert_at(e, &t, 2, "7");
    assert_says(e, "replicas must be 1..5 (nats-server's limit), got 7", "use 3");
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h, replicas: 0 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "workload.streams[0].replicas");
    assert_at(e, &t, 14, "0 }");
    assert_says(e, "got 0", "or 5");
    let e = problems(&with_line(2, "nats: { replicas: [] }"));
    assert_says(at_path(&e, "nats.replicas"), "no replica counts", "[3, 5]");
}

#[test]
fn r2_r4_and_a_single_replica_count_are_accepted() {
    let s = parse(&with_line(2, "nats: { replicas: [2, 4] }")).unwrap();
    assert_eq!(s.nats.replicas, vec![2, 4]);
    let s = parse(&with_line(2, "nats: { replicas: 5 }")).unwrap();
    assert_eq!(s.nats.replicas, vec![5]);
}

#[test]
fn more_hot_spares_than_disks() {
    let t = with_line(
        11,
        "      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 3 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].hot_spares");
    assert_at(e, &t, 11, "3 }");
    assert_says(e, "3 hot spares leave no data disks out of 3", "at most 2");
    // The policy default counts too, and then the problem points at the disks.
    let t = with_line(
        11,
        "      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 1 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].hot_spares");
    assert_at(e, &t, 11, "1 }");
    assert_says(e, "(policy.hot_spares_per_array)", "fewer hot spares");
}

#[test]
fn disks_must_fit_the_array_and_be_at_least_one() {
    let t = with_line(
        11,
        "      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 30 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].disks");
    assert_after(e, &t, 11, "disks: ");
    assert_says(e, "30 disks do not fit the EF300's 24 drive slots", "expansion shelf");
    let t = with_line(
        11,
        "      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 0 }",
    );
    let errs = problems(&t);
    assert_says(
        at_path(&errs, "racks[1].arrays[0].disks"),
        "at least one disk",
        "number of disks",
    );
}

// ---- RAID ----

fn raid_line(disks: u32, spares: &str, raid: &str) -> String {
    with_line(
        11,
        &format!("      - {{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: {disks}{spares}, raid: {raid} }}"),
    )
}

#[test]
fn raid10_needs_an_even_count_of_at_least_4() {
    let t = raid_line(6, ", hot_spares: 1", "raid10");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].raid");
    assert_at(e, &t, 11, "raid10");
    assert_says(
        e,
        "RAID 10 needs an even number of data disks, at least 4; this array has 5 (6 disks − 1 hot spare)",
        "use 4 or 6 data disks",
    );
    let s = parse(&raid_line(5, ", hot_spares: 1", "raid10")).unwrap();
    assert_eq!(s.arrays[1].raid, Some(ArrayRaid::Raid10));
}

#[test]
fn raid1_groups_are_pairs_so_the_count_is_even() {
    let errs = problems(&raid_line(4, ", hot_spares: 1", "raid1"));
    assert_says(
        at_path(&errs, "racks[1].arrays[0].raid"),
        "RAID 1 groups are mirrored pairs, so an even number of data disks, at least 2; this array has 3 data disks",
        "use 2 or 4 data disks",
    );
    assert!(parse(&raid_line(3, ", hot_spares: 1", "raid1")).is_ok());
    // Seed 000 figure (1): seven disks, one spare, three RAID 1 pairs.
    assert!(parse(&raid_line(7, ", hot_spares: 1", "raid1")).is_ok());
}

#[test]
fn raid6_needs_at_least_5() {
    let errs = problems(&raid_line(5, ", hot_spares: 1", "raid6"));
    assert_says(
        at_path(&errs, "racks[1].arrays[0].raid"),
        "RAID 6 needs at least 5 data disks; this array has 4",
        "add 1 disk",
    );
    assert!(parse(&raid_line(6, ", hot_spares: 1", "raid6")).is_ok());
}

#[test]
fn ddp_needs_11_and_no_hot_spares() {
    let errs = problems(&raid_line(10, "", "ddp"));
    assert_says(
        at_path(&errs, "racks[1].arrays[0].raid"),
        "a DDP pool needs at least 11 disks; this array has 10",
        "add 1 disk",
    );
    let t = raid_line(12, ", hot_spares: 1", "ddp");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].hot_spares");
    assert_after(e, &t, 11, "hot_spares: ");
    assert_says(e, "keeps reserve capacity instead of hot spares", "remove hot_spares");
    // Without hot_spares the policy default (1) does not apply to DDP.
    let s = parse(&raid_line(11, "", "ddp")).unwrap();
    assert_eq!(s.arrays[1].hot_spares, 0);
}

#[test]
fn raid_level_unknown_or_not_offered() {
    let t = raid_line(6, "", "raid5");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].arrays[0].raid");
    assert_at(e, &t, 11, "raid5");
    assert_says(e, "unknown RAID level 'raid5'", "raid0, raid1, raid10, raid6, ddp");
    let t = format!(
        "{}\n",
        with_line(
            9,
            "    servers: [{ name: b1, disks: { disk_model: nvme-1.92t, count: 12, raid: ddp } }]"
        )
        .trim_end()
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].servers[0].disks.raid");
    assert_at(e, &t, 9, "ddp");
    assert_says(e, "the internal does not offer ddp", "raid0, raid1, raid10, raid6");
}

// ---- internal disks, hosts, PDUs ----

#[test]
fn internal_disks_are_validated_like_arrays() {
    let t = with_line(
        9,
        "    servers: [{ name: b1, disks: { disk_model: nvme-1.9t, count: 0, size: 1TB } }]",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].servers[0].disks.disk_model");
    assert_at(e, &t, 9, "nvme-1.9t");
    assert_says(e, "did you mean 'nvme-1.92t'?", "nvme-1.92t");
    let e = at_path(&errs, "racks[1].servers[0].disks.count");
    assert_says(e, "at least one", "remove `disks:`");
    let e = at_path(&errs, "racks[1].servers[0].disks.size");
    assert_at(e, &t, 9, "size");
    assert_says(e, "unknown key 'size'", "disk_size");

    let s = parse(&with_line(
        9,
        "    servers: [{ name: b1, host: hv1, disks: { disk_model: virtual, count: 1, disk_size: 200GB } }]",
    ))
    .unwrap();
    let a = &s.arrays[s.servers[2].internal.unwrap()];
    assert_eq!(
        (a.owner, a.disk_size_bytes, a.hot_spares),
        (Some(2), Some(200_000_000_000), 0)
    );
    assert_eq!(s.servers[2].host.as_deref(), Some("hv1"));
}

#[test]
fn servers_sharing_a_host_must_share_a_rack() {
    let t = with_line(5, "    servers: [{ name: a1, host: hv1 }, a2]");
    let t = t.replace("    servers: [b1]", "    servers: [{ name: b1, host: hv1 }]");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].servers[0].host");
    assert_at(e, &t, 9, "hv1");
    assert_says(
        e,
        "host 'hv1' also carries server 'a1' in rack A; one machine cannot stand in two racks",
        "in one rack",
    );
}

#[test]
fn pdus_are_listed_and_unique() {
    let t = with_line(4, "  - name: A\n    pdus: [pdu1, pdu2]")
        .replace("servers: [a1, a2]", "servers: [{ name: a1, pdu: pdu3 }, a2]")
        .replace("    servers: [b1]", "    pdus: [pdu1]\n    servers: [b1]");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[0].servers[0].pdu");
    assert_at(e, &t, 6, "pdu3");
    assert_says(e, "PDU 'pdu3' is not listed in rack A's pdus", "did you mean 'pdu1'?");
    let e = at_path(&errs, "racks[1].pdus[0]");
    assert_at(e, &t, 10, "pdu1");
    assert_says(e, "duplicate PDU name 'pdu1'", "unique name");
}

#[test]
fn rack_feeds_and_uplinks_are_at_least_one() {
    let t = with_line(4, "  - name: A\n    power_feeds: 0\n    uplinks: -1");
    let errs = problems(&t);
    assert_says(at_path(&errs, "racks[0].power_feeds"), "at least 1, got 0", "2");
    assert_says(at_path(&errs, "racks[0].uplinks"), "cannot be negative", "2");
}

// ---- units ----

#[test]
fn sizes_with_bad_units() {
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1 KiBi, retention: 24h }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "workload.streams[0].msg_size");
    assert_at(e, &t, 14, "1 KiBi");
    assert_says(e, "unknown size unit 'kibi' in '1 KiBi'", "KiB/MiB/GiB are binary");
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: -1, retention: 24h }",
    );
    let errs = problems(&t);
    assert_says(
        at_path(&errs, "workload.streams[0].msg_size"),
        "cannot be negative",
        "512B",
    );
}

#[test]
fn durations_need_units() {
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24 }",
    );
    let errs = problems(&t);
    let e = at_path(&errs, "workload.streams[0].retention");
    assert_at(e, &t, 14, "24 }");
    assert_says(e, "a duration needs a unit, got the bare number 24", "24s");
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: a while }",
    );
    let errs = problems(&t);
    assert_says(
        at_path(&errs, "workload.streams[0].retention"),
        "'a while' is not a duration",
        "24h, 7d",
    );
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 0s }",
    );
    assert_says(
        at_path(&problems(&t), "workload.streams[0].retention"),
        "cannot be zero",
        "24h",
    );
}

#[test]
fn sync_interval_values() {
    let t = with_line(2, "nats: { replicas: [3], sync_interval: sometimes }");
    let errs = problems(&t);
    let e = at_path(&errs, "nats.sync_interval");
    assert_at(e, &t, 2, "sometimes");
    assert_says(e, "'sometimes' is neither 'always' nor a duration", "always");
    let errs = problems(&with_line(2, "nats: { sync_interval: 10 }"));
    assert_says(at_path(&errs, "nats.sync_interval"), "needs a unit", "10s");
    let errs = problems(&with_line(2, "nats: { sync_interval: 0s }"));
    assert_says(at_path(&errs, "nats.sync_interval"), "at least 1s", "always");
    let s = parse(&with_line(2, "nats: { sync_interval: always }")).unwrap();
    assert!(!s.nats.sync.is_delayed());
}

#[test]
fn compression_settings() {
    let errs = problems(&with_line(2, "nats: { compression: zstd, compression_ratio: 0.5 }"));
    assert_says(
        at_path(&errs, "nats.compression"),
        "unknown compression 'zstd'",
        "none or s2",
    );
    assert_says(at_path(&errs, "nats.compression_ratio"), "must be >= 1.0", "1.0");
    let errs = problems(&with_line(2, "nats: { compression_ratio: 2 }"));
    assert_says(
        at_path(&errs, "nats.compression_ratio"),
        "needs compression",
        "compression: s2",
    );
}

// ---- workload ----

#[test]
fn kv_and_object_store_limits() {
    let t = format!(
        "{BASE}  kv: [{{ name: s, puts_per_s: 1, value_size: 1KiB, keys: 0, history: 65 }}]\n  object_stores: [{{ name: o, puts_per_s: 1, object_size: 1MiB }}]\n"
    );
    let errs = problems(&t);
    let e = at_path(&errs, "workload.kv[0].keys");
    assert_at(e, &t, 15, "0,");
    assert_says(e, "at least one key", "distinct keys");
    let e = at_path(&errs, "workload.kv[0].history");
    assert_at(e, &t, 15, "65");
    assert_says(e, "history must be 1..64 (nats-server's limit), got 65", "up to 64");
    let e = at_path(&errs, "workload.object_stores[0]");
    assert_at(e, &t, 16, "{ name: o");
    assert_says(e, "needs retention or objects", "retention: 7d");
}

// ---- policy and overrides ----

#[test]
fn policy_values() {
    let t = format!(
        "{BASE}policy: {{ patterns: [\"1\", raid-6], wear_headroom: 1.5, growth: 30, min_tolerated: {{ racks: 2 }} }}\n"
    );
    let errs = problems(&t);
    let e = at_path(&errs, "policy.patterns[1]");
    assert_at(e, &t, 15, "raid-6");
    assert_says(e, "unknown pattern 'raid-6'; did you mean 'raid6'?", "\"ddp-raid1\"");
    assert_says(
        at_path(&errs, "policy.wear_headroom"),
        "must be a fraction in 0..0.9, got 1.5",
        "0.15",
    );
    assert_says(at_path(&errs, "policy.growth"), "30 means 3000 % a year", "write 0.3");
    let e = at_path(&errs, "policy.min_tolerated.racks");
    assert_at(e, &t, 15, "2 }");
    assert_says(
        e,
        "asks to survive losing 2 racks, but the site has only 2; no layout can",
        "lower it below 2",
    );
}

#[test]
fn failure_rate_repair_and_maintenance_overrides() {
    let t = format!(
        "{BASE}failure_rates: {{ disk_afrr: 0.1, server_afr: 2 }}\nrepair_times: {{ disk_replace: soon, rebuild_rate: 200MB/s }}\nmaintenance: {{ upgrades_per_year: -1 }}\n"
    );
    let errs = problems(&t);
    let e = at_path(&errs, "failure_rates.disk_afrr");
    assert_at(e, &t, 15, "disk_afrr");
    assert_says(e, "did you mean 'disk_afr'?", "rename it to 'disk_afr'");
    assert_says(
        at_path(&errs, "failure_rates.server_afr"),
        "2 means 200 %",
        "write 0.02",
    );
    assert_says(
        at_path(&errs, "repair_times.disk_replace"),
        "'soon' is not a duration",
        "24h",
    );
    assert_says(
        at_path(&errs, "maintenance.upgrades_per_year"),
        "must be >= 0",
        "0 or more",
    );
    assert!(!errs.iter().any(|e| e.path == "repair_times.rebuild_rate"), "{errs:#?}");
}

// ---- all at once, and the rendered report ----

#[test]
fn a_type_error_in_one_rack_does_not_hide_an_unknown_key_in_another() {
    let t = with_line(5, "    servers: 12").replace("disks: 3, hot_spares: 1 }", "disks: 3, hotspares: 1 }");
    let errs = problems(&t);
    assert_says(
        at_path(&errs, "racks[0].servers"),
        "expected a list, got the number 12",
        "- item",
    );
    assert_says(
        at_path(&errs, "racks[1].arrays[0].hotspares"),
        "did you mean 'hot_spares'?",
        "rename",
    );
    // Every problem has a path and a place, and they come in file order.
    assert!(errs
        .iter()
        .all(|e| !e.path.is_empty() && e.line.is_some() && e.column.is_some()));
    let places: Vec<_> = errs.iter().map(|e| (e.line, e.column)).collect();
    let mut sorted = places.clone();
    sorted.sort();
    assert_eq!(places, sorted);
}

#[test]
fn the_report_is_stable() {
    let t = with_line(
        7,
        "      - { name: A1, model: EF300, disk_model: nvme-3.8t, disks: 5, hot_spares: 1 }",
    )
    .replace("msgs_per_s: 1000", "msgs_per_s: fast");
    let e = parse(&t).unwrap_err();
    let expected = "\
site.yaml has 2 problems:
  site.yaml:7:47: racks[0].arrays[0].disk_model: unknown disk model 'nvme-3.8t'; did you mean 'nvme-3.84t'?
      fix: write nvme-3.84t; known disk models: nvme-1.92t, nvme-3.84t, nvme-7.68t, nvme-15.3t, sas-ssd-1.92t, sas-ssd-3.84t, nl-sas-8t, nl-sas-16t, virtual
  site.yaml:14:35: workload.streams[0].msgs_per_s: expected a number (messages per second), got the text 'fast'
      fix: write a plain number without quotes or units, e.g. 20000
";
    assert_eq!(e.to_string(), expected);
}

#[test]
fn load_reports_an_unreadable_file() {
    let e = natsplan::site::load(std::path::Path::new("/nonexistent/site.yaml"), &Catalog::builtin()).unwrap_err();
    assert_eq!(e.errors.len(), 1);
    assert!(e.to_string().contains("cannot read the file"), "{e}");
}

#[test]
fn duplicate_server_objects_point_at_the_name() {
    let t = with_line(9, "    servers: [{ name: A2, host: hv9 }]");
    let errs = problems(&t);
    let e = at_path(&errs, "racks[1].servers[0].name");
    assert_at(e, &t, 9, "A2");
    assert_says(
        e,
        "duplicate server name 'A2' (first on line 5, another rack)",
        "compared without case",
    );
}

#[test]
fn a_syntax_error_is_shown_without_a_field_path() {
    let t = with_line(5, "\tservers: [a1, a2]");
    let shown = parse(&t).unwrap_err().to_string();
    // The parser's own wording may change between saphyr versions; the shape may not.
    assert!(
        shown.starts_with("site.yaml has 1 problem:\n  site.yaml:5:1: YAML syntax: "),
        "{shown}"
    );
    assert!(
        shown.ends_with("\n      fix: YAML does not allow tabs for indentation; indent with spaces\n"),
        "{shown}"
    );
}

// ---- stream subjects ----

#[test]
fn subjects_are_kept_as_written() {
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h, subjects: [orders.>, returns.*.new] }",
    );
    let s = parse(&t).unwrap();
    assert_eq!(s.workload.streams[0].subjects, ["orders.>", "returns.*.new"]);
    let one = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h, subjects: orders.eu }",
    );
    assert_eq!(parse(&one).unwrap().workload.streams[0].subjects, ["orders.eu"]);
}

#[test]
fn an_invalid_subject_is_placed_and_explained() {
    let t = with_line(
        14,
        "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h, subjects: [orders.>.eu] }",
    );
    let e = problems(&t);
    let p = at_path(&e, "workload.streams[0].subjects[0]");
    assert_at(p, &t, 14, "orders.>.eu");
    assert_says(p, "'>' may only stand alone as the last token", "orders.>");
}

#[test]
fn overlapping_subjects_between_streams_are_refused() {
    let t = format!(
        "{}    - {{ name: returns, msgs_per_s: 10, msg_size: 1KiB, retention: 24h, subjects: [orders.*] }}\n",
        with_line(
            14,
            "    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h, subjects: [orders.>] }"
        )
    );
    let e = problems(&t);
    let p = at_path(&e, "workload.streams[1].subjects[0]");
    assert_at(p, &t, 15, "orders.*");
    assert_says(p, "overlaps 'orders.>' of stream orders", "its own subjects");
}

#[test]
fn subjects_nats_server_refuses_for_an_acknowledged_stream_are_refused_at_their_place() {
    // Issue 41: `[">"]` and `["$JS.API.>"]` passed design; nats-server refuses both ("capturing all subjects
    // requires no-ack to be true", "subjects that overlap with jetstream api require no-ack to be true").
    for (subjects, says) in [
        ("[\">\"]", "captures every subject"),
        ("[\"$JS.API.>\"]", "overlaps the JetStream API"),
        ("[\"$SYS.SERVER.>\"]", "overlaps the system API"),
    ] {
        let t = with_line(
            14,
            &format!(
                "    - {{ name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 24h, subjects: {subjects} }}"
            ),
        );
        let e = problems(&t);
        let p = at_path(&e, "workload.streams[0].subjects[0]");
        assert_at(p, &t, 14, subjects.trim_matches(['[', ']']));
        assert_says(p, says, "orders.>");
    }
}
