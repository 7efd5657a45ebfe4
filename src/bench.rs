//! `cpistack bench`: throughput figures, measured in-process on pre-generated
//! in-memory streams (never a timed test; `make bench` runs it in release mode).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use events::gen::{GenConfig, Generator};
use events::{CounterUnit, CycleEvents, Params, Variant};

use crate::check::LockStep;

/// Figures by name, in the order measured.
#[derive(Default, Debug)]
pub struct Figures {
    pub items: Vec<(String, f64)>,
    pub notes: BTreeMap<String, String>,
}

impl Figures {
    pub fn push(&mut self, k: &str, v: f64) {
        self.items.push((k.to_string(), v));
    }
    pub fn json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (k, v) in &self.items {
            m.insert(k.clone(), serde_json::json!(v.round()));
        }
        for (k, v) in &self.notes {
            m.insert(k.clone(), serde_json::json!(v));
        }
        serde_json::Value::Object(m)
    }
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.items {
            s.push_str(&format!("{k:<32} {:>14.3} M/s\n", v / 1e6));
        }
        for (k, v) in &self.notes {
            s.push_str(&format!("{k:<32} {v}\n"));
        }
        s
    }
}

/// The benchmark stream: `cycles` bundles of the realistic mix for `params`.
pub fn stream(params: Params, cycles: usize, seed: u64) -> Vec<CycleEvents> {
    Generator::new(params, GenConfig::realistic(), seed)
        .take(cycles)
        .collect()
}

/// Best of `reps` timings of `f`, as items per second.
pub fn rate(items: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    items as f64 / best
}

/// Drive one unit over the whole stream.
pub fn drive<U: CounterUnit>(u: &mut U, s: &[CycleEvents]) {
    for ev in s {
        u.step(black_box(ev));
    }
}

/// The counter-unit figures of issue 2 on a stream of `cycles` bundles.
pub fn unit_figures(cycles: usize, reps: usize, figs: &mut Figures) -> anyhow::Result<()> {
    let p = Params::default();
    let s = stream(p, cycles, 1);
    let ps = p.with_variant(Variant::Sfmt);
    let ss = stream(ps, cycles, 1);

    figs.push(
        "hw_fmt_cycles_per_s",
        rate(cycles, reps, || {
            let mut u = hw::Unit::new(p).expect("default params are legal");
            drive(&mut u, &s);
            assert!(u.view().error.is_none(), "bench stream must be legal");
            black_box(u.view());
        }),
    );
    figs.push(
        "hw_sfmt_cycles_per_s",
        rate(cycles, reps, || {
            let mut u = hw::Unit::new(ps).expect("default params are legal");
            drive(&mut u, &ss);
            assert!(u.view().error.is_none(), "bench stream must be legal");
            black_box(u.view());
        }),
    );
    figs.push(
        "golden_fmt_cycles_per_s",
        rate(cycles, reps, || {
            let mut u = golden::Unit::new(p).expect("default params are legal");
            drive(&mut u, &s);
            black_box(u.view());
        }),
    );
    for (key, params, st) in [
        ("lockstep_fmt_cycles_per_s", p, &s),
        ("lockstep_sfmt_cycles_per_s", ps, &ss),
    ] {
        let mut err = None;
        let r = rate(cycles, reps, || {
            let mut l = LockStep::new(params).expect("default params are legal");
            for ev in st.iter() {
                if let Err(m) = l.step(ev) {
                    err = Some(m);
                    break;
                }
            }
        });
        if let Some(m) = err {
            anyhow::bail!("benchmark stream disagreed in lock step:\n{m}");
        }
        figs.push(key, r);
    }

    let mut buf = Vec::with_capacity(cycles * 16 + 64);
    {
        let mut w = events::stream::BinWriter::new(&mut buf, &p)?;
        for ev in &s {
            w.write(ev)?;
        }
        w.finish()?;
    }
    let mut out = vec![CycleEvents::default(); 4096];
    figs.push(
        "decode_bin_cycles_per_s",
        rate(cycles, reps, || {
            let mut r = events::stream::BinReader::new(&buf[..]).expect("header just written");
            let mut n = 0usize;
            loop {
                let k = r.read_batch(&mut out).expect("stream just written");
                if k == 0 {
                    break;
                }
                n += k;
                black_box(&out[..k]);
            }
            assert_eq!(n, cycles);
        }),
    );
    Ok(())
}
