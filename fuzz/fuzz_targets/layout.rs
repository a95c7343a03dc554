//! Any dependency structure, cycles, self-loops and unknown steps included:
//! building the plan graph and laying it out must not panic or hang.
#![no_main]

use countersign_domain::graph::StepGraph;
use countersign_domain::layout::{layout_graph, LayoutOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&size, edges)) = data.split_first() else {
        return;
    };
    let steps = usize::from(size) + 1;
    let mut dependencies: Vec<Vec<Option<usize>>> = vec![Vec::new(); steps];
    for pair in edges.chunks_exact(2) {
        // 255 names a step that does not exist.
        let from = (pair[0] != 255).then_some(usize::from(pair[0]) % steps);
        dependencies[usize::from(pair[1]) % steps].push(from);
    }
    let (graph, _problems) = StepGraph::build(
        dependencies
            .iter()
            .enumerate()
            .map(|(i, deps)| (Some(i), deps.iter().copied())),
    );
    let drawn = layout_graph(&graph, &LayoutOptions::default());
    for point in drawn.edges.iter().flat_map(|e| &e.points) {
        assert!(point.0.is_finite() && point.1.is_finite());
    }
});
