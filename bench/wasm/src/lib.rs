//! What the browser benchmarks call in wasm, beside the JavaScript peers:
//! the domain's plan layout (against dagre) and canonical JSON + SHA-256
//! (against an npm RFC 8785 implementation with WebCrypto). Built for
//! wasm32 with the app's `wasm-release` profile by `bench/run.mjs`.

use countersign_domain::graph::StepGraph;
use countersign_domain::layout::{layout_graph, LayoutOptions};
use countersign_domain::toolcall::{canonicalize_text, CallHash};
use wasm_bindgen::prelude::*;

/// Lays out `n` steps whose dependencies are `from[i] -> to[i]` (positions;
/// `to` depends on `from`). Returns `[layers, crossings, x1, y1, x2, y2, ...]`:
/// the layout's own count of crossings, then every straight segment of every
/// drawn edge, so the page counts crossings the same way for both layouts.
#[wasm_bindgen]
pub fn layout(n: usize, from: &[u32], to: &[u32]) -> Vec<f64> {
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (&f, &t) in from.iter().zip(to) {
        deps[t as usize].push(f as usize);
    }
    let steps = deps
        .iter()
        .enumerate()
        .map(|(i, d)| (Some(i), d.iter().map(|&d| Some(d))));
    let (graph, _) = StepGraph::build(steps);
    let drawn = layout_graph(&graph, &LayoutOptions::default());
    let mut out = vec![drawn.layers as f64, drawn.crossings as f64];
    for edge in &drawn.edges {
        for pair in edge.points.windows(2) {
            out.extend([pair[0].0, pair[0].1, pair[1].0, pair[1].1]);
        }
    }
    out
}

/// RFC 8785 canonical form of a JSON text and its SHA-256 (lowercase hex);
/// the error names the problem and its path.
#[wasm_bindgen]
pub fn canonical_hash(text: &str) -> Result<String, JsError> {
    let canonical = canonicalize_text(text).map_err(|e| JsError::new(&e.to_string()))?;
    Ok(CallHash::of_canonical(&canonical).as_str().to_owned())
}
