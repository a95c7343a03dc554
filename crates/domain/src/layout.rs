//! Layered drawing of a plan's DAG (Sugiyama style), top to bottom: a step sits
//! below the steps it depends on.
//!
//! 1. Cycles are broken by reversing DFS back edges (the edges stay marked).
//! 2. Layers by longest path from the sources; sources are then pulled down next
//!    to their first dependent.
//! 3. Edges spanning several layers get one virtual node per layer crossed.
//! 4. Order within layers: barycenter sweeps down and up, keeping the order with
//!    the fewest crossings (counted exactly).
//! 5. x: per layer, the least-squares placement nearest the neighbours' centres
//!    that keeps order and spacing (isotonic regression), alternating directions.
//!
//! Deterministic: ties always break by step position. Cost: O((V + E′) log V · S)
//! for V nodes, E′ edges after splitting and S sweeps (S ≤ 8).

use crate::graph::StepGraph;
use crate::model::Plan;

/// Sizes and gaps of the drawing, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutOptions {
    /// Width of a step's box.
    pub node_width: f64,
    /// Height of a step's box.
    pub node_height: f64,
    /// Horizontal gap between boxes.
    pub node_gap: f64,
    /// Vertical gap between layers.
    pub layer_gap: f64,
}

impl Default for LayoutOptions {
    fn default() -> Self {
        LayoutOptions {
            node_width: 220.0,
            node_height: 76.0,
            node_gap: 28.0,
            layer_gap: 56.0,
        }
    }
}

/// Where a step's box goes (top-left corner).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodePlacement {
    /// Layer, 0 at the top.
    pub layer: usize,
    /// Position within the layer, 0 at the left.
    pub order: usize,
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
}

/// A dependency arrow, from the step depended on to the step that depends on it.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRoute {
    /// Position of the step depended on.
    pub from: usize,
    /// Position of the dependent step.
    pub to: usize,
    /// Polyline from `from`'s box to `to`'s box.
    pub points: Vec<(f64, f64)>,
    /// Part of a dependency cycle (drawn as an error).
    pub on_cycle: bool,
    /// Part of the critical path.
    pub critical: bool,
}

/// A plan laid out for drawing.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanLayout {
    /// One placement per step, by position.
    pub nodes: Vec<NodePlacement>,
    /// One route per dependency.
    pub edges: Vec<EdgeRoute>,
    /// Drawing width.
    pub width: f64,
    /// Drawing height.
    pub height: f64,
    /// Number of layers.
    pub layers: usize,
    /// Edge crossings between adjacent layers in the final order.
    pub crossings: usize,
    /// The longest chain of dependent steps, first to last (empty when the plan
    /// has a cycle).
    pub critical_path: Vec<usize>,
}

/// Lays out a plan's steps and dependencies. See the module docs for the method.
pub fn layout_plan(plan: &Plan, options: &LayoutOptions) -> PlanLayout {
    let graph = StepGraph::of_plan(plan);
    layout_graph(&graph, options)
}

/// Lays out any step graph. See the module docs for the method.
pub fn layout_graph(graph: &StepGraph, options: &LayoutOptions) -> PlanLayout {
    let n = graph.len();
    // Edges downward: dependency -> dependent.
    let mut edges: Vec<(usize, usize)> = Vec::with_capacity(graph.edge_count());
    for step in 0..n {
        for e in graph.dependencies(step) {
            edges.push((e.target, step));
        }
    }
    let components = graph.strong_components();
    let reversed = back_edges(n, &edges);
    let acyclic: Vec<(usize, usize)> = edges
        .iter()
        .zip(&reversed)
        .map(|(&(u, v), &r)| if r { (v, u) } else { (u, v) })
        .collect();
    let layer = assign_layers(n, &acyclic);
    let layers_count = layer.iter().copied().max().map_or(0, |m| m + 1);

    // Split long edges with virtual nodes; `chains[i]` is edge i's node sequence.
    let mut node_layer = layer.clone();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(acyclic.len());
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(u, v) in &acyclic {
        let mut chain = vec![u];
        let mut prev = u;
        for l in layer[u] + 1..layer[v] {
            let d = node_layer.len();
            node_layer.push(l);
            succ.push(Vec::new());
            pred.push(Vec::new());
            succ[prev].push(d);
            pred[d].push(prev);
            chain.push(d);
            prev = d;
        }
        succ[prev].push(v);
        pred[v].push(prev);
        chain.push(v);
        chains.push(chain);
    }

    let order = order_layers(&node_layer, layers_count, &succ, &pred);
    let crossings = total_crossings(&order, &succ);
    let x = place_horizontally(&order, &succ, &pred, n, options);

    let step_h = options.node_height + options.layer_gap;
    let mut position_in_layer = vec![0; node_layer.len()];
    for row in &order {
        for (i, &v) in row.iter().enumerate() {
            position_in_layer[v] = i;
        }
    }
    let min_x = (0..node_layer.len())
        .map(|v| x[v] - if v < n { options.node_width / 2.0 } else { 0.0 })
        .fold(f64::INFINITY, f64::min);
    let shift = if min_x.is_finite() { -min_x } else { 0.0 };
    let nodes: Vec<NodePlacement> = (0..n)
        .map(|v| NodePlacement {
            layer: layer[v],
            order: position_in_layer[v],
            x: x[v] + shift - options.node_width / 2.0,
            y: layer[v] as f64 * step_h,
        })
        .collect();
    let width = (0..node_layer.len())
        .map(|v| x[v] + shift + if v < n { options.node_width / 2.0 } else { 0.0 })
        .fold(0.0, f64::max);
    let height = if layers_count == 0 {
        0.0
    } else {
        layers_count as f64 * step_h - options.layer_gap
    };

    let critical_path = if components_have_cycle(&components) {
        Vec::new()
    } else {
        longest_path(n, &edges)
    };
    let mut on_critical = vec![None; n];
    for pair in critical_path.windows(2) {
        on_critical[pair[1]] = Some(pair[0]);
    }

    let routes = edges
        .iter()
        .zip(&chains)
        .zip(&reversed)
        .map(|((&(from, to), chain), &was_reversed)| {
            let mut points: Vec<(f64, f64)> = chain
                .iter()
                .map(|&v| {
                    let cx = x[v] + shift;
                    let top = node_layer[v] as f64 * step_h;
                    (cx, top + options.node_height / 2.0)
                })
                .collect();
            // Start and end on the boxes' borders rather than their centres.
            let half = options.node_height / 2.0;
            let last = points.len() - 1;
            points[0].1 += half;
            points[last].1 -= half;
            if was_reversed {
                points.reverse();
            }
            EdgeRoute {
                from,
                to,
                points,
                on_cycle: components[from] == components[to],
                critical: on_critical[to] == Some(from),
            }
        })
        .collect();

    PlanLayout {
        nodes,
        edges: routes,
        width,
        height,
        layers: layers_count,
        crossings,
        critical_path,
    }
}

fn components_have_cycle(components: &[usize]) -> bool {
    let mut seen = vec![false; components.len()];
    components
        .iter()
        .any(|&c| std::mem::replace(&mut seen[c], true))
}

/// Marks the edges that close a cycle in a depth-first search from each step in
/// position order (iterative). O(V + E).
fn back_edges(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, &(u, _)) in edges.iter().enumerate() {
        out[u].push(i);
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; n];
    let mut back = vec![false; edges.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if mark[root] != Mark::New {
            continue;
        }
        mark[root] = Mark::Open;
        stack.push((root, 0));
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&edge) = out[v].get(*next) {
                *next += 1;
                let w = edges[edge].1;
                match mark[w] {
                    Mark::New => {
                        mark[w] = Mark::Open;
                        stack.push((w, 0));
                    }
                    Mark::Open => back[edge] = true,
                    Mark::Done => {}
                }
            } else {
                mark[v] = Mark::Done;
                stack.pop();
            }
        }
    }
    back
}

/// Longest-path layering of an acyclic edge list, then steps with more dependents
/// than dependencies (sources included) move down next to their dependents. O(V + E).
fn assign_layers(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for &(u, v) in edges {
        succ[u].push(v);
        indegree[v] += 1;
    }
    let mut layer = vec![0usize; n];
    let mut queue: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    let mut head = 0;
    let mut waiting = indegree.clone();
    while head < queue.len() {
        let u = queue[head];
        head += 1;
        for &v in &succ[u] {
            layer[v] = layer[v].max(layer[u] + 1);
            waiting[v] -= 1;
            if waiting[v] == 0 {
                queue.push(v);
            }
        }
    }
    // Shorten edges: walking up from the bottom, a step with more dependents than
    // dependencies moves down to just above its nearest dependent (each move
    // shortens more edges than it lengthens).
    for &v in queue.iter().rev() {
        if succ[v].len() > indegree[v] {
            if let Some(nearest) = succ[v].iter().map(|&s| layer[s]).min() {
                layer[v] = layer[v].max(nearest.saturating_sub(1));
            }
        }
    }
    layer
}

/// Orders every layer by barycenter sweeps, keeping the best order seen.
fn order_layers(
    node_layer: &[usize],
    layers: usize,
    succ: &[Vec<usize>],
    pred: &[Vec<usize>],
) -> Vec<Vec<usize>> {
    const SWEEPS: usize = 8;
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (v, &l) in node_layer.iter().enumerate() {
        order[l].push(v);
    }
    let mut position = vec![0f64; node_layer.len()];
    let index = |order: &[Vec<usize>], position: &mut [f64]| {
        for row in order {
            for (i, &v) in row.iter().enumerate() {
                position[v] = i as f64;
            }
        }
    };
    index(&order, &mut position);
    let mut best = order.clone();
    let mut best_crossings = total_crossings(&order, succ);
    let mut keys: Vec<(f64, usize)> = Vec::new();
    let mut sweeps_without_gain = 0;
    for sweep in 0..SWEEPS {
        if best_crossings == 0 || sweeps_without_gain == 2 {
            break;
        }
        let downward = sweep % 2 == 0;
        let rows: Vec<usize> = if downward {
            (1..layers).collect()
        } else {
            (0..layers.saturating_sub(1)).rev().collect()
        };
        for l in rows {
            let neighbours = if downward { pred } else { succ };
            keys.clear();
            keys.extend(order[l].iter().map(|&v| {
                let ns = &neighbours[v];
                let key = if ns.is_empty() {
                    position[v]
                } else {
                    ns.iter().map(|&u| position[u]).sum::<f64>() / ns.len() as f64
                };
                (key, v)
            }));
            // Stable: equal keys keep their current relative order.
            keys.sort_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(position[a.1].total_cmp(&position[b.1]))
            });
            order[l].clear();
            order[l].extend(keys.iter().map(|&(_, v)| v));
            for (i, &v) in order[l].iter().enumerate() {
                position[v] = i as f64;
            }
        }
        let crossings = total_crossings(&order, succ);
        if crossings < best_crossings {
            best_crossings = crossings;
            best = order.clone();
            sweeps_without_gain = 0;
        } else {
            sweeps_without_gain += 1;
        }
    }
    best
}

/// Crossings between all adjacent layers, each pair counted by inversions with a
/// Fenwick tree. O(E log V).
fn total_crossings(order: &[Vec<usize>], succ: &[Vec<usize>]) -> usize {
    let mut position = vec![0usize; succ.len()];
    for row in order {
        for (i, &v) in row.iter().enumerate() {
            position[v] = i;
        }
    }
    let mut total = 0;
    let mut targets: Vec<usize> = Vec::new();
    for pair in order.windows(2) {
        let (upper, lower) = (&pair[0], &pair[1]);
        targets.clear();
        for &u in upper {
            let start = targets.len();
            targets.extend(succ[u].iter().map(|&v| position[v]));
            targets[start..].sort_unstable();
        }
        let mut tree = vec![0usize; lower.len() + 1];
        for (seen, &t) in targets.iter().enumerate() {
            // Edges seen so far that end strictly to the right of t cross this one.
            let mut not_greater = 0;
            let mut i = t + 1;
            while i > 0 {
                not_greater += tree[i];
                i &= i - 1;
            }
            total += seen - not_greater;
            let mut i = t + 1;
            while i < tree.len() {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        }
    }
    total
}

/// Horizontal centres: each layer placed as close as order and spacing allow to
/// the mean centre of its neighbours, alternating down and up passes.
fn place_horizontally(
    order: &[Vec<usize>],
    succ: &[Vec<usize>],
    pred: &[Vec<usize>],
    real: usize,
    options: &LayoutOptions,
) -> Vec<f64> {
    const PASSES: usize = 6;
    const VIRTUAL_WIDTH: f64 = 12.0;
    let width = |v: usize| {
        if v < real {
            options.node_width
        } else {
            VIRTUAL_WIDTH
        }
    };
    let mut x = vec![0f64; succ.len()];
    for row in order {
        let mut at = 0.0;
        for (i, &v) in row.iter().enumerate() {
            if i > 0 {
                at += (width(row[i - 1]) + width(v)) / 2.0 + options.node_gap;
            }
            x[v] = at;
        }
    }
    let mut desired: Vec<f64> = Vec::new();
    let mut gaps: Vec<f64> = Vec::new();
    for pass in 0..PASSES {
        let downward = pass % 2 == 0;
        let layers: Vec<usize> = if downward {
            (1..order.len()).collect()
        } else {
            (0..order.len().saturating_sub(1)).rev().collect()
        };
        for l in layers {
            let row = &order[l];
            let neighbours = if downward { pred } else { succ };
            desired.clear();
            desired.extend(row.iter().map(|&v| {
                let ns = &neighbours[v];
                if ns.is_empty() {
                    x[v]
                } else {
                    ns.iter().map(|&u| x[u]).sum::<f64>() / ns.len() as f64
                }
            }));
            gaps.clear();
            gaps.extend(
                row.windows(2)
                    .map(|w| (width(w[0]) + width(w[1])) / 2.0 + options.node_gap),
            );
            let placed = spaced_least_squares(&desired, &gaps);
            for (&v, px) in row.iter().zip(placed) {
                x[v] = px;
            }
        }
    }
    x
}

/// The positions p (p[i+1] - p[i] >= gaps[i]) nearest to `desired` in least squares:
/// isotonic regression (pool adjacent violators) on the gap-shifted targets. O(k).
fn spaced_least_squares(desired: &[f64], gaps: &[f64]) -> Vec<f64> {
    let mut offset = Vec::with_capacity(desired.len());
    let mut acc = 0.0;
    for i in 0..desired.len() {
        if i > 0 {
            acc += gaps[i - 1];
        }
        offset.push(acc);
    }
    // Blocks of (mean, count), merged while they violate monotonicity.
    let mut blocks: Vec<(f64, usize)> = Vec::with_capacity(desired.len());
    for (d, o) in desired.iter().zip(&offset) {
        blocks.push((d - o, 1));
        while blocks.len() > 1 {
            let (m2, c2) = blocks[blocks.len() - 1];
            let (m1, c1) = blocks[blocks.len() - 2];
            if m1 <= m2 {
                break;
            }
            blocks.pop();
            let merged = (m1 * c1 as f64 + m2 * c2 as f64) / (c1 + c2) as f64;
            let last = blocks.len() - 1;
            blocks[last] = (merged, c1 + c2);
        }
    }
    let mut out = Vec::with_capacity(desired.len());
    for (mean, count) in blocks {
        for _ in 0..count {
            let i = out.len();
            out.push(mean + offset[i]);
        }
    }
    out
}

/// The longest chain of steps (by step count) in an acyclic edge list; ties go to
/// the lowest position. O(V + E).
fn longest_path(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting = vec![0usize; n];
    for &(u, v) in edges {
        succ[u].push(v);
        waiting[v] += 1;
    }
    let mut length = vec![1usize; n];
    let mut came_from: Vec<Option<usize>> = vec![None; n];
    let mut queue: Vec<usize> = (0..n).filter(|&v| waiting[v] == 0).collect();
    let mut head = 0;
    while head < queue.len() {
        let u = queue[head];
        head += 1;
        for &v in &succ[u] {
            let better = length[u] + 1 > length[v]
                || (length[u] + 1 == length[v] && came_from[v].is_some_and(|p| u < p));
            if better {
                length[v] = length[u] + 1;
                came_from[v] = Some(u);
            }
            waiting[v] -= 1;
            if waiting[v] == 0 {
                queue.push(v);
            }
        }
    }
    let Some(end) = (0..n).max_by(|&a, &b| length[a].cmp(&length[b]).then(b.cmp(&a))) else {
        return Vec::new();
    };
    let mut path = vec![end];
    let mut at = end;
    while let Some(p) = came_from[at] {
        path.push(p);
        at = p;
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(deps: &[&[usize]]) -> StepGraph {
        let steps = deps
            .iter()
            .enumerate()
            .map(|(i, d)| (Some(i), d.iter().map(|&x| Some(x)).collect::<Vec<_>>()));
        StepGraph::build(steps).0
    }

    #[test]
    fn diamond_layers_and_critical_path() {
        // 0 -> {1, 2} -> 3, plus 3 -> 4
        let layout = layout_graph(
            &graph(&[&[], &[0], &[0], &[1, 2], &[3]]),
            &LayoutOptions::default(),
        );
        let layers: Vec<usize> = layout.nodes.iter().map(|n| n.layer).collect();
        assert_eq!(layers, vec![0, 1, 1, 2, 3]);
        assert_eq!(layout.critical_path, vec![0, 1, 3, 4]);
        assert_eq!(layout.crossings, 0);
        assert_eq!(layout.edges.iter().filter(|e| e.critical).count(), 3);
        // Steps in one layer never overlap.
        let o = LayoutOptions::default();
        assert!((layout.nodes[1].x - layout.nodes[2].x).abs() >= o.node_width + o.node_gap - 1e-6);
    }

    #[test]
    fn source_pulled_next_to_its_dependent() {
        // 0 -> 1 -> 2 -> 3, and 4 (a source) feeds only 3
        let layout = layout_graph(
            &graph(&[&[], &[0], &[1], &[2, 4], &[]]),
            &LayoutOptions::default(),
        );
        assert_eq!(layout.nodes[4].layer, 2);
    }

    #[test]
    fn cycle_is_drawn_and_marked() {
        let layout = layout_graph(&graph(&[&[2], &[0], &[1], &[0]]), &LayoutOptions::default());
        assert!(layout.critical_path.is_empty());
        let on_cycle: Vec<(usize, usize)> = layout
            .edges
            .iter()
            .filter(|e| e.on_cycle)
            .map(|e| (e.from, e.to))
            .collect();
        assert_eq!(on_cycle.len(), 3);
        assert!(layout
            .edges
            .iter()
            .any(|e| !e.on_cycle && e.from == 0 && e.to == 3));
    }

    #[test]
    fn long_edges_are_routed_through_each_layer() {
        let layout = layout_graph(
            &graph(&[&[], &[0], &[1], &[0, 2]]),
            &LayoutOptions::default(),
        );
        let long = layout
            .edges
            .iter()
            .find(|e| e.from == 0 && e.to == 3)
            .unwrap();
        assert_eq!(long.points.len(), 4);
        assert!(long.points.windows(2).all(|w| w[0].1 < w[1].1));
    }

    #[test]
    fn crossing_count_is_exact() {
        let order = vec![vec![0, 1], vec![2, 3]];
        let succ = vec![vec![3], vec![2], vec![], vec![]];
        assert_eq!(total_crossings(&order, &succ), 1);
    }

    #[test]
    fn isotonic_spacing() {
        let p = spaced_least_squares(&[10.0, 10.0, 10.0], &[4.0, 4.0]);
        assert_eq!(p, vec![6.0, 10.0, 14.0]);
        let p = spaced_least_squares(&[0.0, 100.0], &[4.0]);
        assert_eq!(p, vec![0.0, 100.0]);
    }

    #[test]
    fn empty_graph() {
        let layout = layout_graph(&StepGraph::default(), &LayoutOptions::default());
        assert_eq!((layout.width, layout.height, layout.layers), (0.0, 0.0, 0));
    }
}
