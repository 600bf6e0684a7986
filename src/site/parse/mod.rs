//! From YAML text to a validated `Site`. Problems are collected, never returned one at a time: a user
//! fixing a site file wants the whole list, each problem with its file:line:column, its field path, what
//! is wrong and how to fix it. Only a YAML syntax error stops early (a parser cannot resynchronise after
//! one), and it still says where.
//!
//! The walk is over the spanned tree of `input::yaml`, one section at a time; a section that is the wrong
//! shape is reported and skipped, so a type error in one rack never hides an unknown key in another.

mod keys;
mod racks;
mod read;
mod site;
pub mod stream_config;
mod stream_file;
pub mod stream_spec;
mod workload;

use super::model::*;
use crate::catalog::Catalog;
use crate::input::{yaml, InputError, InputErrors};
use read::Validator;
use std::path::Path;

/// Read and validate a site file.
pub fn load(path: &Path, catalog: &Catalog) -> Result<Site, InputErrors> {
    let file = path.display().to_string();
    let text = crate::input::read_text(path, "site file").map_err(|mut e| {
        for x in &mut e.errors {
            x.fix = x
                .fix
                .take()
                .map(|f| format!("{f}; `natsplan design examples/three-racks-raid1.yaml` shows a working one"));
        }
        e
    })?;
    parse_str(&text, &file, catalog)
}

/// Reads a file the site file names (`workload.streams[].config`), by the path as written there: its
/// text, or why it cannot be read.
pub type SiteFiles<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// Validate site YAML text; `file` is used in messages, and files it names are read relative to its folder.
pub fn parse_str(text: &str, file: &str, catalog: &Catalog) -> Result<Site, InputErrors> {
    let dir = Path::new(file).parent().map(Path::to_path_buf).unwrap_or_default();
    let read = move |rel: &str| -> Result<String, String> {
        crate::input::read_text(&dir.join(rel), "stream config").map_err(|e| {
            e.errors
                .first()
                .map(|x| x.message.clone())
                .unwrap_or_else(|| e.to_string())
        })
    };
    parse_str_with(text, file, catalog, &read)
}

/// `parse_str` with the files the site names read by `files` (a saved plan holds them).
pub fn parse_str_with(text: &str, file: &str, catalog: &Catalog, files: SiteFiles<'_>) -> Result<Site, InputErrors> {
    let fail = |errors: Vec<InputError>| InputErrors {
        file: file.to_string(),
        errors,
    };
    let root = match yaml::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            return Err(fail(vec![InputError {
                path: "site".into(),
                line: Some(1),
                column: Some(1),
                message: "the file is empty (no YAML document)".into(),
                fix: Some("start from examples/full-reference.yaml, which shows every key".into()),
            }]))
        }
        Err(e) => {
            return Err(fail(vec![InputError {
                path: String::new(),
                line: e.pos.map(|p| p.line),
                column: e.pos.map(|p| p.col),
                message: e.message,
                fix: Some(e.fix),
            }]))
        }
    };
    let mut v = Validator {
        errors: Vec::new(),
        catalog,
        files,
    };
    let site = v.build(&root);
    if v.errors.is_empty() {
        Ok(site)
    } else {
        // File order reads best; problems without a place (none today) go last. The sort is stable, so
        // two problems on one value keep the order they were found in.
        v.errors
            .sort_by_key(|e| (e.line.unwrap_or(usize::MAX), e.column.unwrap_or(usize::MAX)));
        Err(fail(v.errors))
    }
}

#[cfg(test)]
mod tests {
    use super::keys::{nearest, ARRAY_KEYS};
    use super::*;

    const SAMPLE: &str = r#"
site: east-dc
nats: { replicas: [3, 5], sync_interval: 2m, compression: none, compression_ratio: 1.0 }
racks:
  - name: A
    servers: [alpha, bravo]
    arrays:
      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }
  - name: B
    servers: [charlie, delta]
    arrays:
      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }
  - name: C
    servers: [echo]
    arrays:
      - { name: C1, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }
workload:
  streams:       [{ name: orders, msgs_per_s: 20000, msg_size: 1KiB, retention: 24h, replicas: 3, consumers: 2 }]
  kv:            [{ name: sessions, puts_per_s: 3000, value_size: 512B, keys: 1000000, history: 1 }]
  object_stores: [{ name: blobs, puts_per_s: 50, gets_per_s: 20, object_size: 1MiB, retention: 6h }]
  core:          { msgs_per_s: 500000, msg_size: 128B }
policy: { patterns: ["1", "2", "3", "4"], wear_headroom: 0.15, hot_spares_per_array: 1,
          min_tolerated: { racks: 1 }, growth: 0.3, horizon: 1y }
failure_rates: { disk_afr: 0.01 }
"#;

    fn parse(t: &str) -> Result<Site, InputErrors> {
        parse_str(t, "site.yaml", &Catalog::builtin())
    }

    #[test]
    fn issue_sample_parses() {
        let s = parse(SAMPLE).unwrap();
        assert_eq!(s.name, "east-dc");
        assert_eq!(s.racks.len(), 3);
        assert_eq!(s.servers.len(), 5);
        assert_eq!(s.arrays.len(), 3);
        assert_eq!(s.arrays[2].hot_spares, 1);
        assert_eq!(s.nats.replicas, vec![3, 5]);
        assert_eq!(s.workload.streams[0].msg_size_bytes, 1024);
        assert_eq!(s.workload.streams[0].retention_s, 86_400.0);
        assert_eq!(s.workload.kv[0].keys, 1_000_000);
        assert_eq!(s.workload.object_stores[0].retention_s, Some(21_600.0));
        assert_eq!(s.policy.min_tolerated.racks, 1);
        assert_eq!(s.failure_rates, vec![("disk_afr".to_string(), 0.01)]);
        assert_eq!(s.servers[4].rack, 2);
        assert_eq!(s.arrays[0].raid, None);
    }

    #[test]
    fn nearest_finds_typos_not_strangers() {
        assert_eq!(nearest("disk_modle", ARRAY_KEYS.iter().copied()), Some("disk_model"));
        assert_eq!(nearest("nvme-3.8t", ["nvme-3.84t", "nvme-1.92t"]), Some("nvme-3.84t"));
        assert_eq!(nearest("colour", ARRAY_KEYS.iter().copied()), None);
    }

    #[test]
    fn errors_are_sorted_by_place_and_all_reported() {
        let t = SAMPLE
            .replace(
                "disks: 3, hot_spares: 1 }\n  - name: B",
                "disks: three, hot_spares: 1 }\n  - name: B",
            )
            .replace("name: C1, model", "name: C1, colour: red, model");
        let e = parse(&t).unwrap_err();
        assert_eq!(e.errors.len(), 2, "{e}");
        assert!(e.errors[0].line < e.errors[1].line);
        assert!(e.errors[0].message.contains("whole number"));
        assert!(e.errors[1].message.contains("unknown key 'colour'"));
    }

    #[test]
    fn raid_rules() {
        assert!(ArrayRaid::Raid10.check_data_disks(4).is_ok());
        assert!(ArrayRaid::Raid10.check_data_disks(5).is_err());
        assert!(ArrayRaid::Raid10.check_data_disks(2).is_err());
        assert!(ArrayRaid::Raid1.check_data_disks(2).is_ok());
        // RAID 1 is the level of the groups: six data disks are three mirrored pairs (seed 000 figure 1).
        assert!(ArrayRaid::Raid1.check_data_disks(6).is_ok());
        assert!(ArrayRaid::Raid1.check_data_disks(3).is_err());
        assert!(ArrayRaid::Raid1.check_data_disks(1).is_err());
        assert!(ArrayRaid::Raid6.check_data_disks(5).is_ok());
        assert!(ArrayRaid::Raid6.check_data_disks(4).is_err());
        assert!(ArrayRaid::Ddp.check_data_disks(11).is_ok());
        assert!(ArrayRaid::Ddp.check_data_disks(10).is_err());
        assert_eq!(ArrayRaid::parse("RAID 10"), Some(ArrayRaid::Raid10));
        assert_eq!(ArrayRaid::parse("DDP"), Some(ArrayRaid::Ddp));
        assert_eq!(ArrayRaid::parse("raid5"), None);
    }

    #[test]
    fn display_is_one_line_per_problem_with_a_fix() {
        let e = parse(&SAMPLE.replace("nvme-3.84t, disks: 2", "nvme-3.8t, disks: 2")).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("site.yaml has 1 problem:\n"), "{text}");
        assert!(
            text.contains(
                "site.yaml:16:47: racks[2].arrays[0].disk_model: unknown disk model 'nvme-3.8t'; did you mean 'nvme-3.84t'?\n      fix: write nvme-3.84t;"
            ),
            "{text}"
        );
    }
}
