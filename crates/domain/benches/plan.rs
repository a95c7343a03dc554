//! Validation + layout of plans of 10 to 10,000 steps (budget: 1,000 steps in
//! under 5 ms; growth no worse than about n log n in steps + dependencies).
//!
//! Plans mix realistic shapes: chains, fan-out/fan-in around hub steps, and
//! sparse random dependencies on recent steps. Run: `cargo bench -p countersign-domain`.

use countersign_domain::layout::{layout_plan, LayoutOptions};
use countersign_domain::{validate_document, Document};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};

/// A small deterministic generator (xorshift), so every run measures the same plans.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn id(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

/// Dependencies of step i. The plan runs in phases of 40 steps, each of one shape:
/// a chain (each step waits for the previous one), a fan-out/fan-in (one step
/// opens the phase, the middle steps wait for it, the last waits for 8 of them),
/// or sparse random work (1-3 dependencies among the 25 steps before).
/// Every phase opens with a step that waits for the previous phase's last step.
fn dependencies(n: usize) -> Vec<Vec<usize>> {
    const PHASE: usize = 40;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|i| {
            let start = i - i % PHASE;
            let mut deps = Vec::new();
            if i == 0 {
                return deps;
            }
            if i == start {
                deps.push(i - 1);
            } else {
                match (i / PHASE) % 3 {
                    0 => deps.push(i - 1),
                    1 if i % PHASE == PHASE - 1 => deps.extend((i - 8)..i),
                    1 => deps.push(start),
                    _ => {
                        for _ in 0..=rng.below(3) {
                            deps.push(i - 1 - rng.below((i - start).min(25)));
                        }
                    }
                }
            }
            deps.sort_unstable();
            deps.dedup();
            deps
        })
        .collect()
}

fn plan(n: usize) -> Value {
    let steps: Vec<Value> = dependencies(n)
        .iter()
        .enumerate()
        .map(|(i, deps)| {
            json!({
                "step_id": id(i + 1),
                "description": format!("Step {i}: migrate shard {i} and verify row counts"),
                "status": "pending",
                "agent_role": "migrator",
                "dependencies": deps.iter().map(|&d| id(d + 1)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "meta": {"protocol_version": "1.0.0", "schema_version": "1.0.0"},
        "plan_id": id(0xFFFF_FFFF),
        "context_id": id(0xFFFF_FFFE),
        "title": format!("{n}-step plan"),
        "objective": "Benchmark",
        "status": "proposed",
        "steps": steps,
    })
}

fn bench(c: &mut Criterion) {
    let options = LayoutOptions::default();
    let mut group = c.benchmark_group("validate_and_layout");
    for n in [10, 100, 1_000, 10_000] {
        let value = plan(n);
        let Ok(Document::Plan(typed)) = Document::from_value(&value) else {
            panic!("bench plan is invalid")
        };
        assert!(validate_document(&value).is_valid());
        let edges: usize = typed.steps.iter().map(|s| s.dependencies().len()).sum();
        group.throughput(Throughput::Elements((n + edges) as u64));
        group.sample_size(if n >= 10_000 { 10 } else { 30 });
        group.bench_with_input(BenchmarkId::new("validate", n), &value, |b, v| {
            b.iter(|| validate_document(black_box(v)))
        });
        group.bench_with_input(BenchmarkId::new("layout", n), &typed, |b, p| {
            b.iter(|| layout_plan(black_box(p), &options))
        });
        group.bench_with_input(
            BenchmarkId::new("both", n),
            &(value.clone(), typed.clone()),
            |b, (v, p)| {
                b.iter(|| {
                    (
                        validate_document(black_box(v)),
                        layout_plan(black_box(p), &options),
                    )
                })
            },
        );
        let layout = layout_plan(&typed, &options);
        println!(
            "plan of {n} steps, {edges} dependencies: {} layers, {} crossings, critical path {} steps",
            layout.layers,
            layout.crossings,
            layout.critical_path.len()
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
