//! RFC 8785 canonical JSON + SHA-256 of tool calls of about 1 KB, 100 KB and
//! 1 MB, from their text (parse, canonicalize, hash), natively. The browser
//! figures, beside a JavaScript implementation, come from `bench/run.mjs`.
//! Run: `cargo bench -p countersign-domain --bench canonical`.

use countersign_domain::toolcall::{canonicalize_text, CallHash};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Map, Value};

/// A tool call of about `bytes` of JSON: strings, numbers, booleans, objects
/// (the same mix as the browser benchmark).
fn call(bytes: usize) -> String {
    let mut args = Map::new();
    let mut i = 0;
    while Value::Object(args.clone()).to_string().len() < bytes {
        let value = if i % 3 == 0 {
            json!({"n": i * 7, "ok": i % 2 == 0, "note": format!("{:<40}", format!("value {i} ")).replace(' ', "x")})
        } else {
            json!(format!("{:<90}", format!("value {i} ")).replace(' ', "x"))
        };
        args.insert(format!("field_{i}"), value);
        i += 1;
    }
    json!({"name": "bulk_update", "args": args}).to_string()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("canonical_hash");
    for bytes in [1_000, 100_000, 1_000_000] {
        let text = call(bytes);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.sample_size(if bytes >= 1_000_000 { 10 } else { 50 });
        group.bench_with_input(BenchmarkId::from_parameter(bytes), &text, |b, text| {
            b.iter(|| CallHash::of_canonical(&canonicalize_text(black_box(text)).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
