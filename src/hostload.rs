//! The measuring host's own load: how much CPU *other* processes took while natsplan measured, and how
//! much the hypervisor stole. A benchmark client that shares its cores with a build or another tenant
//! measures less than the cluster can do (issue 37: a calibrate run on a busy host missed by 25–30 %
//! median and nothing said why), so calibrate and verify read this before and during a run, record it and
//! say when it was busy.
//!
//! Linux only, read from procfs (proc(5)): `/proc/stat`'s `cpu` line (ticks spent per state, summed over
//! every CPU: user nice system idle iowait irq softirq steal guest guest_nice — guest time is already in
//! user, so it is not added again) and `/proc/PID/stat` (fields 14–17: utime, stime, cutime, cstime, in the
//! same clock ticks). "Ours" is natsplan itself (its threads and the children it waited for) and every
//! `nats-server` process on the host: a loopback lab's servers are part of what is measured, not other
//! load. Two limits, said in docs/verify.md: another tenant's nats-server on this host counts as ours (the host
//! then reads quieter than it is), and with `verify --agents` the load measured is the coordinator's host,
//! not the agents'. Elsewhere (no procfs) nothing is read and nothing is said.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Other processes using more than this share of the host's cores make it busy (an assumption: a quarter
/// of a 2-core host is half a core taken from the client and the servers it measures; said in the output).
pub const BUSY_SHARE: f64 = 0.25;
/// CPU steal above this percent of the host's time makes it busy (an assumption, as above: a hypervisor
/// taking a twentieth of the time shows in latency percentiles first).
pub const BUSY_STEAL_PERCENT: f64 = 5.0;

/// One reading of `/proc/stat`'s `cpu` line, in clock ticks over all CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuTicks {
    pub total: u64,
    /// idle + iowait.
    pub idle: u64,
    pub steal: u64,
    /// `cpuN` lines: the host's CPUs.
    pub cpus: u32,
}

/// Parse `/proc/stat`; None when it has no `cpu` line.
pub fn parse_proc_stat(text: &str) -> Option<CpuTicks> {
    let mut out: Option<CpuTicks> = None;
    let mut cpus = 0;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        match f.next() {
            Some("cpu") => {
                let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
                let at = |i: usize| v.get(i).copied().unwrap_or(0);
                // user nice system idle iowait irq softirq steal (guest, guest_nice are inside user, nice).
                let total: u64 = (0..8).map(at).sum();
                out = Some(CpuTicks {
                    total,
                    idle: at(3) + at(4),
                    steal: at(7),
                    cpus: 0,
                });
            }
            Some(c) if c.starts_with("cpu") && c[3..].chars().all(|d| d.is_ascii_digit()) => cpus += 1,
            _ => {}
        }
    }
    out.map(|t| CpuTicks { cpus, ..t })
}

/// A `/proc/PID/stat` line: (command name, utime + stime + cutime + cstime in clock ticks).
pub fn parse_pid_stat(text: &str) -> Option<(String, u64)> {
    // The name is in parentheses and may hold spaces or parentheses itself: split at the last ')'.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); utime is field 14, so rest[11..15].
    let ticks = (11..15)
        .map(|i| rest.get(i).and_then(|x| x.parse::<i64>().ok()).unwrap_or(0).max(0) as u64)
        .sum();
    Some((name, ticks))
}

/// One reading of the host and of our processes.
#[derive(Debug, Clone)]
pub struct Reading {
    cpu: CpuTicks,
    /// (pid, its ticks) of each of our processes, by pid.
    ours: Vec<(u32, u64)>,
    at: Instant,
}

/// Our processes' ticks between two readings, per process: the growth of those in both, and all of those
/// that started in between (a process that ended in between is lost to both readings: its last ticks then
/// count as other processes', an error towards "busy").
fn ours_between(a: &[(u32, u64)], b: &[(u32, u64)]) -> u64 {
    b.iter()
        .map(|&(pid, t)| match a.binary_search_by_key(&pid, |x| x.0) {
            Ok(i) => t.saturating_sub(a[i].1),
            Err(_) => t,
        })
        .sum()
}

/// Read the host now; None without procfs.
pub fn read() -> Option<Reading> {
    let cpu = parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let me = std::process::id();
    let mut ours = Vec::new();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        if let Some((comm, ticks)) = parse_pid_stat(&text) {
            if pid == me || comm == "nats-server" {
                ours.push((pid, ticks));
            }
        }
    }
    ours.sort_unstable();
    Some(Reading {
        cpu,
        ours,
        at: Instant::now(),
    })
}

/// The host's load between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub seconds: f64,
    /// The host's CPUs (`/proc/stat` `cpuN` lines).
    pub cores: u32,
    /// Cores' worth of CPU that processes other than natsplan and nats-server used.
    pub other_cores: f64,
    /// Percent of the host's CPU time the hypervisor stole.
    pub steal_percent: f64,
    /// `other_cores` above `BUSY_SHARE` of the cores, or steal above `BUSY_STEAL_PERCENT`.
    pub busy: bool,
}

impl HostLoad {
    /// The load from `a` to `b` (None when no time passed between them).
    pub fn between(a: &Reading, b: &Reading) -> Option<HostLoad> {
        HostLoad::from_ticks(
            &a.cpu,
            &b.cpu,
            ours_between(&a.ours, &b.ours),
            b.at.duration_since(a.at).as_secs_f64(),
        )
    }

    /// The load from two `/proc/stat` readings and our processes' ticks in between.
    pub fn from_ticks(a: &CpuTicks, b: &CpuTicks, ours: u64, seconds: f64) -> Option<HostLoad> {
        let total = b.total.checked_sub(a.total)?;
        if total == 0 {
            return None;
        }
        let idle = b.idle.saturating_sub(a.idle);
        let steal = b.steal.saturating_sub(a.steal);
        let busy_ticks = total.saturating_sub(idle).saturating_sub(steal);
        let cores = b.cpus.max(1);
        let other = busy_ticks.saturating_sub(ours) as f64 / total as f64 * f64::from(cores);
        let steal_percent = 100.0 * steal as f64 / total as f64;
        Some(HostLoad {
            seconds,
            cores,
            other_cores: other,
            steal_percent,
            busy: other > BUSY_SHARE * f64::from(cores) || steal_percent > BUSY_STEAL_PERCENT,
        })
    }

    /// "other processes used 1.02 of 2 cores, steal 0.0 %".
    pub fn describe(&self) -> String {
        format!(
            "other processes used {:.2} of {} cores, steal {:.1} % (over {:.0} s)",
            self.other_cores, self.cores, self.steal_percent, self.seconds
        )
    }

    /// Why it counts as busy, with the thresholds and that they are assumptions.
    pub fn busy_because(&self) -> String {
        format!(
            "a busy client host: {} (busy above {:.0} % of the cores or {:.0} % steal, natsplan's assumption)",
            self.describe(),
            BUSY_SHARE * 100.0,
            BUSY_STEAL_PERCENT
        )
    }
}

/// How the load at `now` differs from the load `then` (a calibration's) in words, when it changed enough
/// to matter: one busy and the other not, or the other processes' share moved by more than `BUSY_SHARE`
/// of the cores. None when alike.
pub fn changed(then: &HostLoad, now: &HostLoad) -> Option<String> {
    let cores = f64::from(then.cores.max(now.cores).max(1));
    let moved = (then.other_cores - now.other_cores).abs() > BUSY_SHARE * cores;
    if then.busy == now.busy && !moved {
        return None;
    }
    let word = |h: &HostLoad| if h.busy { "busy" } else { "quiet" };
    let effect = if then.other_cores > now.other_cores || (then.busy && !now.busy) {
        "its predictions read low for this host: rows may land above their bands"
    } else {
        "this run's rows read low for the cluster: the client had less of its host"
    };
    Some(format!(
        "on a {} host ({}) and this run on a {} one ({}): {effect}",
        word(then),
        then.describe(),
        word(now),
        now.describe()
    ))
}

/// Measure the host for `d` before a run starts (natsplan idle meanwhile): the load others put on it.
pub fn sample(d: std::time::Duration) -> Option<HostLoad> {
    let a = read()?;
    std::thread::sleep(d);
    let b = read()?;
    HostLoad::between(&a, &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_is_read_as_ticks_over_all_cpus() {
        let t = "cpu  100 5 50 800 40 3 2 10 7 0\ncpu0 50 2 25 400 20 1 1 5 3 0\ncpu1 50 3 25 400 20 2 1 5 4 0\n\
                 intr 1 2 3\nctxt 9\n";
        let c = parse_proc_stat(t).unwrap();
        assert_eq!(
            c,
            CpuTicks {
                total: 1010,
                idle: 840,
                steal: 10,
                cpus: 2
            }
        );
        assert!(parse_proc_stat("intr 1\n").is_none());
    }

    #[test]
    fn pid_stat_names_with_spaces_and_parentheses_are_read() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        // cutime cstime ...
        let t = "4242 (nats (x) server) S 1 2 3 4 5 6 7 8 9 10 300 40 5 6 20 0 1 0";
        assert_eq!(parse_pid_stat(t), Some(("nats (x) server".to_string(), 351)));
        assert!(parse_pid_stat("garbage").is_none());
    }

    #[test]
    fn others_are_the_busy_ticks_that_are_not_ours_and_steal_is_apart() {
        let a = CpuTicks {
            total: 0,
            idle: 0,
            steal: 0,
            cpus: 2,
        };
        // 200 ticks over 2 CPUs in one second: 60 idle, 140 busy of which 40 ours → 100 others = 1 core.
        let b = CpuTicks {
            total: 200,
            idle: 60,
            steal: 0,
            cpus: 2,
        };
        let l = HostLoad::from_ticks(&a, &b, 40, 1.0).unwrap();
        assert!((l.other_cores - 1.0).abs() < 1e-9 && l.busy, "{l:?}");
        // All of it ours: not busy, whatever the total.
        let l = HostLoad::from_ticks(&a, &b, 140, 1.0).unwrap();
        assert!(l.other_cores == 0.0 && !l.busy, "{l:?}");
        // A quarter of the cores is the line (0.5 of 2 is not above it; 0.52 is).
        let l = HostLoad::from_ticks(&a, &b, 90, 1.0).unwrap();
        assert!((l.other_cores - 0.5).abs() < 1e-9 && !l.busy, "{l:?}");
        let l = HostLoad::from_ticks(&a, &b, 88, 1.0).unwrap();
        assert!(l.busy, "{l:?}");
        // Steal: 20 of 200 ticks is 10 %: busy although nothing else ran.
        let s = CpuTicks { steal: 20, ..b };
        let l = HostLoad::from_ticks(&a, &s, 120, 1.0).unwrap();
        assert!(
            (l.steal_percent - 10.0).abs() < 1e-9 && l.other_cores == 0.0 && l.busy,
            "{l:?}"
        );
        // No time between the readings: no figure.
        assert!(HostLoad::from_ticks(&a, &a, 0, 0.0).is_none());
        assert!(l.busy_because().contains("natsplan's assumption"));
    }

    #[test]
    fn a_change_from_the_calibrations_load_is_said_and_alike_loads_are_not() {
        let h = |other: f64| HostLoad {
            seconds: 60.0,
            cores: 2,
            other_cores: other,
            steal_percent: 0.0,
            busy: other > BUSY_SHARE * 2.0,
        };
        assert_eq!(changed(&h(0.05), &h(0.1)), None);
        let c = changed(&h(0.05), &h(1.2)).unwrap();
        assert!(
            c.starts_with("on a quiet host") && c.contains("busy one") && c.contains("read low for the cluster"),
            "{c}"
        );
        let c = changed(&h(1.2), &h(0.0)).unwrap();
        assert!(c.contains("predictions read low"), "{c}");
        // Both busy but one much busier: said.
        assert!(changed(&h(0.6), &h(1.9)).is_some());
    }

    #[test]
    fn a_reading_of_this_host_counts_its_cpus_and_this_process_as_ours() {
        if !std::path::Path::new("/proc/stat").exists() {
            return;
        }
        let r = read().expect("procfs is read");
        let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(r.cpu.cpus as usize >= allowed, "{:?} cpus, {allowed} allowed", r.cpu);
        assert!(r.ours.iter().any(|&(p, _)| p == std::process::id()), "{:?}", r.ours);
    }

    #[test]
    fn our_ticks_are_per_process_growth_and_new_processes_whole() {
        // 7 grew by 30, 9 ended (lost: not subtracted), 12 started with 5 ticks.
        assert_eq!(ours_between(&[(7, 100), (9, 400)], &[(7, 130), (12, 5)]), 35);
        // A reused pid whose ticks went down counts as nothing, not as a wrap.
        assert_eq!(ours_between(&[(7, 100)], &[(7, 20)]), 0);
    }
}
