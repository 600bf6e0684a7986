//! The migration of a `size --have` candidate: what changes on owned hardware between today's layout and
//! the candidate's (volumes rebuilt, servers retired or added to JetStream, replica counts, disks and
//! parts installed), and whether it can be done one rack (or one server) at a time with every stream
//! keeping its quorum — judged from what today's layout and the candidate's both tolerate, since the
//! servers being rebuilt are out of the cluster meanwhile.

use crate::plan::PlannedLayout;
use crate::site::Tolerance;
use serde::Serialize;

/// A JetStream server's volume, as design places it: what identifies it on the array.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Volume {
    pub rack: String,
    pub array: Option<String>,
    pub raid: Option<String>,
    pub drives: Vec<u32>,
    pub lun_bytes: u64,
}

impl Volume {
    fn same_group(&self, o: &Volume) -> bool {
        (&self.array, &self.raid, &self.drives) == (&o.array, &o.raid, &o.drives)
    }
    fn words(&self) -> String {
        match (&self.array, &self.raid) {
            (Some(a), Some(r)) => format!("{r} on {a} drives {:?}", self.drives),
            (Some(a), None) => format!("a volume on {a}"),
            _ => "its own disks".into(),
        }
    }
}

/// Today's layout on the owned site: the one design ranks first on the `--have` site as it is, or the
/// one `--have-layout` names.
#[derive(Debug, Clone, Serialize)]
pub struct Today {
    pub layout: String,
    /// True when `--have-layout` did not name it (design's first-ranked layout of the `--have` site).
    pub assumed: bool,
    pub replicas: u8,
    pub tolerates: Tolerance,
    #[serde(skip)]
    pub volumes: Vec<(String, Volume)>,
}

pub fn volumes(l: &PlannedLayout) -> Vec<(String, Volume)> {
    l.servers
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                Volume {
                    rack: s.rack.clone(),
                    array: s.array.clone(),
                    raid: s.raid.clone(),
                    drives: s.drives.clone(),
                    lun_bytes: s.lun_bytes,
                },
            )
        })
        .collect()
}

impl Today {
    pub fn of(l: &PlannedLayout, assumed: bool) -> Today {
        Today {
            layout: l.id.clone(),
            assumed,
            replicas: l.replicas,
            tolerates: l.tolerates,
            volumes: volumes(l),
        }
    }
}

/// How the owned servers' volumes can be rebuilt with every stream keeping its quorum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rolling {
    /// Nothing on owned hardware is rebuilt.
    NoRebuild,
    /// Every rebuilt server of one rack at once, rack after rack.
    OneRackAtATime,
    /// One server at a time (a rack at once would cost some stream its quorum).
    OneServerAtATime,
    /// Not even one server can be out with every stream keeping its quorum: a maintenance window, or
    /// move the streams to added servers first.
    NotOnline,
}

/// What a candidate changes on owned hardware, in order.
#[derive(Debug, Clone, Serialize)]
pub struct Migration {
    /// Whether the layout on owned hardware changes (a volume rebuilt or a server retired).
    pub layout_change: bool,
    /// Owned servers whose volume is rebuilt (their store is wiped: peer-remove, rebuild the volume,
    /// rejoin under a new `server_name`, replicas caught up from peers).
    pub rebuild: Vec<String>,
    pub rolling: Rolling,
    /// True when the rebuilds (if any) can be done with every stream keeping its quorum.
    pub keeps_quorum: bool,
    /// Each step in one line, in the order to do them.
    pub steps: Vec<String>,
    /// Added servers this layout leaves out of JetStream (bought for their disks or rack share only: a
    /// bill without them may do as well).
    pub idle_added: Vec<String>,
}

/// Racks of the rebuilt servers, each with its servers, in rack order of first appearance.
fn by_rack<'a>(today: &'a Today, rebuild: &[String]) -> Vec<(&'a str, Vec<&'a str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, v) in &today.volumes {
        if !rebuild.contains(name) {
            continue;
        }
        match out.iter_mut().find(|(r, _)| *r == v.rack) {
            Some((_, s)) => s.push(name),
            None => out.push((&v.rack, vec![name])),
        }
    }
    out
}

fn rolling(today: &Today, cand: &Tolerance, rebuild: &[String]) -> Rolling {
    if rebuild.is_empty() {
        return Rolling::NoRebuild;
    }
    let both = |f: fn(&Tolerance) -> u32| f(&today.tolerates).min(f(cand));
    let racks = by_rack(today, rebuild);
    let per_rack = racks.iter().map(|(_, s)| s.len() as u32).max().unwrap_or(0);
    if both(|t| t.racks) >= 1
        || (racks.len() == rebuild.len() && both(|t| t.servers) >= 1)
        || both(|t| t.servers) >= per_rack
    {
        Rolling::OneRackAtATime
    } else if both(|t| t.servers) >= 1 {
        Rolling::OneServerAtATime
    } else {
        Rolling::NotOnline
    }
}

/// The migration from today's layout to the candidate's layout `cand`, with the parts `added` lists
/// (installed first: adding disks, servers, arrays and racks disturbs no running stream).
pub fn migration(today: &Today, cand: &PlannedLayout, added: &super::grow::Added) -> Migration {
    let now = volumes(cand);
    let mut steps: Vec<String> = added.items.iter().map(|a| format!("install {a}")).collect();
    let mut rebuild = Vec::new();
    let mut retired = Vec::new();
    for (name, old) in &today.volumes {
        match now.iter().find(|(n, _)| n == name) {
            None => retired.push(name.clone()),
            Some((_, new)) if !old.same_group(new) => {
                rebuild.push(name.clone());
                steps.push(format!(
                    "rebuild {name}'s volume: {} → {} (peer-remove {name}, build the new group and LUN, rejoin \
                     under a new server_name; its replicas catch up from peers)",
                    old.words(),
                    new.words()
                ));
            }
            Some((_, new)) if old.lun_bytes != new.lun_bytes => steps.push(format!(
                "resize {name}'s LUN on {}: {:.2} → {:.2} TiB (same group, no rebuild)",
                new.words(),
                old.lun_bytes as f64 / TIB,
                new.lun_bytes as f64 / TIB
            )),
            Some(_) => {}
        }
    }
    for (name, v) in now.iter().filter(|(n, _)| !today.volumes.iter().any(|(o, _)| o == n)) {
        steps.push(format!(
            "start JetStream on {name} ({}) and let it join the cluster",
            v.words()
        ));
    }
    if cand.replicas != today.replicas {
        steps.push(format!(
            "change the default replicas R{} → R{} (nats stream edit --replicas, online, one stream at a time)",
            today.replicas, cand.replicas
        ));
    }
    let servers_change = now.len() != today.volumes.len() || !retired.is_empty();
    if servers_change || !rebuild.is_empty() {
        steps.push(
            "re-emit the configuration (natsplan emit) and re-place streams on the new tags (nats stream edit; \
             NATS moves replicas online)"
                .into(),
        );
    }
    for name in &retired {
        steps.push(format!(
            "retire {name} from JetStream once its replicas have moved (peer-remove {name})"
        ));
    }
    let idle_added: Vec<String> = added
        .server_names
        .iter()
        .filter(|n| !now.iter().any(|(m, _)| m == *n))
        .cloned()
        .collect();
    for name in &idle_added {
        steps.push(format!(
            "note: {name} is bought but this layout leaves it out of JetStream (a bill without it may do as well)"
        ));
    }
    let rolling = rolling(today, &cand.tolerates, &rebuild);
    Migration {
        layout_change: !rebuild.is_empty() || !retired.is_empty(),
        keeps_quorum: rolling != Rolling::NotOnline,
        rebuild,
        rolling,
        steps,
        idle_added,
    }
}

const TIB: f64 = 1024.0 * 1024.0 * 1024.0 * 1024.0;

impl Migration {
    /// One line: how many rebuilds, and how.
    pub fn summary(&self) -> String {
        match self.rolling {
            Rolling::NoRebuild if self.layout_change => "no volume rebuilt; servers retired from JetStream".into(),
            Rolling::NoRebuild => "no change on owned hardware: add and join".into(),
            Rolling::OneRackAtATime => format!(
                "rebuild {} one rack at a time, every stream keeps its quorum",
                self.rebuild.join(", ")
            ),
            Rolling::OneServerAtATime => format!(
                "rebuild {} one server at a time (a rack at once would cost a stream its quorum)",
                self.rebuild.join(", ")
            ),
            Rolling::NotOnline => format!(
                "rebuild {}: not online (a server out costs a stream its quorum): a maintenance window, or \
                 move streams to added servers first",
                self.rebuild.join(", ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vol(rack: &str, array: &str, raid: &str, drives: &[u32]) -> Volume {
        Volume {
            rack: rack.into(),
            array: Some(array.into()),
            raid: Some(raid.into()),
            drives: drives.to_vec(),
            lun_bytes: 1,
        }
    }

    fn today(tol: Tolerance) -> Today {
        Today {
            layout: "t".into(),
            assumed: true,
            replicas: 3,
            tolerates: tol,
            volumes: vec![
                ("a".into(), vol("A", "A1", "raid0", &[1])),
                ("b".into(), vol("A", "A1", "raid0", &[2])),
                ("c".into(), vol("B", "B1", "raid0", &[1])),
            ],
        }
    }

    #[test]
    fn rebuilds_go_rack_by_rack_only_when_a_rack_can_be_out() {
        let rebuild = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let l = |t: Tolerance| t;
        let rack = Tolerance {
            racks: 1,
            arrays: 1,
            servers: 1,
            disks: 1,
        };
        let server = Tolerance {
            servers: 1,
            disks: 1,
            ..Tolerance::default()
        };
        let none = Tolerance::default();
        assert_eq!(rolling(&today(rack), &l(rack), &rebuild), Rolling::OneRackAtATime);
        // Today tolerates a rack but the candidate only a server: rack A's two at once would not do.
        assert_eq!(rolling(&today(rack), &l(server), &rebuild), Rolling::OneServerAtATime);
        assert_eq!(rolling(&today(none), &l(rack), &rebuild), Rolling::NotOnline);
        assert_eq!(rolling(&today(none), &l(none), &[]), Rolling::NoRebuild);
    }
}
