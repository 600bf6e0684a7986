//! Acknowledged writes at risk from a power cut: republished from the clients, or the diverged replicas
//! resynced — the steps of recovery.rs for them. Moved out of recovery.rs whole.

use super::*;

impl<'b> Builder<'b, '_> {
    /// Streams, KV buckets and object stores at risk of losing acknowledged writes to a power cut and not
    /// otherwise lost (a destroyed asset has its own steps).
    fn acked_writes_at_risk(&self) -> Vec<&'b str> {
        self.sc
            .assets
            .iter()
            .filter(|a| a.acked_loss_risk && a.loss.is_none())
            .filter(|a| {
                matches!(
                    a.kind,
                    GroupKind::Asset(AssetKind::Stream | AssetKind::Kv | AssetKind::ObjectStore)
                )
            })
            .map(|a| a.name.as_str())
            .collect()
    }

    /// Of [`Self::acked_writes_at_risk`], the replicated ones: only they have replicas to diverge (an R1
    /// asset has none).
    fn diverging(&self) -> Vec<&'b str> {
        self.acked_writes_at_risk()
            .into_iter()
            .filter(|n| self.sc.assets.iter().any(|a| a.name == *n && a.replicas > 1))
            .collect()
    }
}

impl Builder<'_, '_> {
    /// Streams, KV buckets and object stores at risk of losing acknowledged writes (a quorum of replicas
    /// lost what the page cache held, `sync_interval` not `always`) and not otherwise lost: their producers
    /// re-publish, by message id, what they had acknowledged and the stream no longer holds.
    pub(super) fn republish_acked(&mut self) {
        let at_risk = self.acked_writes_at_risk();
        if at_risk.is_empty() {
            return;
        }
        let crash_pause = self
            .sc
            .assets
            .iter()
            .any(|a| at_risk.contains(&a.name.as_str()) && a.acked_loss_cause == Some("crash_plus_pause"));
        let why = match crash_pause {
            false => "a quorum of replicas lost its page cache",
            true => "a quorum of replicas lost its page cache, or a crash plus a pause let a replica without them lead",
        };
        // A replica that diverged can hold a replicated stream's writes back until it re-syncs: the lab's
        // power-crash-pause (issue 35, 5 December) had a follower reset on "last sequence mismatch" every
        // second for 148 s after the new leader took over, the stream without a quorum meanwhile, and the
        // re-publish answered "duplicate message id is in process" (10158) until the re-sync. So the
        // re-publish may take up to the re-sync's bound after the operator starts it.
        let (held_back, wait) = match self.diverging().is_empty() {
            true => (String::new(), 0.0),
            false => (
                " A diverged replica can hold a stream's writes back until it re-syncs (up to about 3 min 15 s; \
                 see the re-sync step): keep retrying until each takes them."
                    .to_string(),
                DIVERGED_RESYNC_S,
            ),
        };
        self.push(
            "lost data",
            format!(
                "{}: acknowledged writes of the last sync window may be gone ({why}): once each leads again, every producer re-publishes what it had acknowledged and the \
                 stream no longer holds, under the same Nats-Msg-Id (the stream's duplicate window, 2 min by \
                 default, drops any that did survive: re-publish within it, or compare by id first).{held_back} \
                 sync_interval: always closes this window",
                short_list(&at_risk)
            ),
            self.t("operator_response") + wait,
            Uses::default(),
            Credentials::ApplicationAccount,
            Action::RepublishAcked {
                streams: at_risk.iter().map(|n| n.to_string()).collect(),
            },
        );
    }
}

impl Builder<'_, '_> {
    /// Streams at risk of lost acknowledged writes: each replica whose page cache was cut lost its own tail
    /// (a crash plus a pause leaves the paused ones with all of it), so a replica may hold entries the new
    /// leader lacks or have fallen behind what the leader's log still holds; it re-syncs only at the
    /// leader's next stream snapshot. The lab saw both: power-crash-pause's paused replica (117 s and 125 s),
    /// and power-all's restarted n3 at sequence 1,083 of 24,156, still not current 60 s later (CI, 5 Dec).
    pub(super) fn resync_diverged(&mut self) {
        let replicated = self.diverging();
        if replicated.is_empty() {
            return;
        }
        // The divergence starts when the failed servers run again and a new leader is elected: the re-sync
        // follows the longest of the failed domains' chains (its bound counts from the leader's restart), so
        // the recovery's total is that chain plus the re-sync, not the larger of the two.
        let chain = self
            .chains()
            .into_iter()
            .filter(|(c, _)| self.sc.failed.iter().any(|d| d.to_string() == *c))
            .fold(None, |best: Option<(String, f64)>, c| match best {
                Some(b) if b.1 >= c.1 => Some(b),
                _ => Some(c),
            })
            .map_or_else(|| "diverged replicas".to_string(), |c| c.0);
        self.push(
            &chain,
            format!(
                "{}: a replica whose log diverged from the new leader's (each replica lost its own unsynced \
                 tail, or a paused one kept writes the leader lost) re-syncs only at the leader's next stream \
                 snapshot: at most about 3 min 15 s after the divergence (nats-server's 2 min snapshot ticker, \
                 up to 1 min of jitter and a 15 s forced retry, server/jetstream_cluster.go), once the leader \
                 has written past the diverged replica (an idle stream re-syncs after its next writes). Until \
                 then the stream runs on fewer current replicas, or takes no writes while a follower resets on \
                 \"last sequence mismatch\", and `/healthz` reports it not current: wait, do not remove the replica",
                short_list(&replicated)
            ),
            DIVERGED_RESYNC_S,
            Uses::default(),
            Credentials::None,
            Action::Resync {
                streams: replicated.iter().map(|n| n.to_string()).collect(),
            },
        );
    }
}
