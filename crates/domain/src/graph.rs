//! A plan's steps as a directed graph over their positions, with the DAG checks.
//!
//! Every algorithm here is iterative (no recursion), so a 10,000-step chain cannot
//! overflow the stack in the browser.

use std::collections::HashMap;
use std::hash::Hash;

/// An edge: the step at `target` must finish before the owner; `index` is the
/// dependency's position in the owner's `dependencies` array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DependencyEdge {
    /// Position of the step depended on.
    pub target: usize,
    /// Position in the owner's `dependencies` array.
    pub index: usize,
}

/// Something wrong with the graph's references, by position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphProblem {
    /// Step `step` reuses the id of the earlier step `first`.
    DuplicateId { step: usize, first: usize },
    /// Dependency `index` of step `step` names no step.
    UnknownDependency { step: usize, index: usize },
    /// Dependency `index` of step `step` names the step itself.
    SelfDependency { step: usize, index: usize },
}

/// A set of steps that depend on each other in a circle, in order: each step
/// depends on the next one, and the last depends on the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle(pub Vec<usize>);

/// Steps and their dependencies, as positions in the plan's `steps` array.
#[derive(Debug, Clone, Default)]
pub struct StepGraph {
    edges: Vec<Vec<DependencyEdge>>,
}

impl StepGraph {
    /// Builds the graph from each step's id and dependency ids (`None` where the
    /// id is missing or malformed). Duplicate ids resolve to their first step.
    /// O(n + e) expected.
    pub fn build<K, S, D>(steps: S) -> (StepGraph, Vec<GraphProblem>)
    where
        K: Eq + Hash,
        S: IntoIterator<Item = (Option<K>, D)>,
        D: IntoIterator<Item = Option<K>>,
    {
        let (ids, dependencies): (Vec<Option<K>>, Vec<Vec<Option<K>>>) = steps
            .into_iter()
            .map(|(id, deps)| (id, deps.into_iter().collect()))
            .unzip();
        let mut problems = Vec::new();
        let mut position: HashMap<&K, usize> = HashMap::with_capacity(ids.len());
        for (step, id) in ids.iter().enumerate() {
            if let Some(id) = id {
                match position.get(id) {
                    Some(&first) => problems.push(GraphProblem::DuplicateId { step, first }),
                    None => {
                        position.insert(id, step);
                    }
                }
            }
        }
        let edges = dependencies
            .iter()
            .enumerate()
            .map(|(step, deps)| {
                let mut out: Vec<DependencyEdge> = Vec::with_capacity(deps.len());
                for (index, dep) in deps.iter().enumerate() {
                    let Some(dep) = dep else { continue };
                    match position.get(dep) {
                        None => problems.push(GraphProblem::UnknownDependency { step, index }),
                        Some(&target) if target == step => {
                            problems.push(GraphProblem::SelfDependency { step, index })
                        }
                        Some(&target) if out.iter().any(|e| e.target == target) => {}
                        Some(&target) => out.push(DependencyEdge { target, index }),
                    }
                }
                out
            })
            .collect();
        (StepGraph { edges }, problems)
    }

    /// The graph of a typed plan (its reference problems are left to validation). O(n + e).
    pub fn of_plan(plan: &crate::model::Plan) -> StepGraph {
        let steps = plan.steps.iter().map(|s| {
            (
                Some(s.step_id),
                s.dependencies()
                    .iter()
                    .copied()
                    .map(Some)
                    .collect::<Vec<_>>(),
            )
        });
        StepGraph::build(steps).0
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// Whether the plan has no steps.
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The steps that `step` depends on.
    pub fn dependencies(&self, step: usize) -> &[DependencyEdge] {
        &self.edges[step]
    }

    /// Number of dependency edges. O(n).
    pub fn edge_count(&self) -> usize {
        self.edges.iter().map(Vec::len).sum()
    }

    /// The steps in an order where every step comes after its dependencies
    /// (Kahn's algorithm; ties by position, so the result is deterministic).
    /// Fails with every cycle when the graph is not a DAG. O(n + e).
    pub fn topological_order(&self) -> Result<Vec<usize>, Vec<Cycle>> {
        let n = self.len();
        let mut waiting: Vec<usize> = self.edges.iter().map(Vec::len).collect();
        let dependents = self.dependents();
        let mut order: Vec<usize> = (0..n).filter(|&s| waiting[s] == 0).collect();
        let mut next = 0;
        while next < order.len() {
            let step = order[next];
            next += 1;
            for &d in &dependents[step] {
                waiting[d] -= 1;
                if waiting[d] == 0 {
                    order.push(d);
                }
            }
        }
        if order.len() == n {
            Ok(order)
        } else {
            Err(self.cycles())
        }
    }

    /// For each step, the steps that depend on it (the reverse edges). O(n + e).
    pub fn dependents(&self) -> Vec<Vec<usize>> {
        let mut dependents = vec![Vec::new(); self.len()];
        for (step, deps) in self.edges.iter().enumerate() {
            for e in deps {
                dependents[e.target].push(step);
            }
        }
        dependents
    }

    /// One cycle through each strongly connected group of steps (Tarjan's
    /// algorithm, iterative), each as the shortest cycle through the group's
    /// first step. Empty for a DAG. O(n + e).
    pub fn cycles(&self) -> Vec<Cycle> {
        let components = self.strong_components();
        let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
        for (step, &c) in components.iter().enumerate() {
            groups.entry(c).or_default().push(step);
        }
        let mut cycles: Vec<Cycle> = groups
            .into_values()
            .filter(|members| members.len() > 1)
            .map(|members| self.shortest_cycle_through(members[0], &components))
            .collect();
        cycles.sort_by_key(|c| c.0[0]);
        cycles
    }

    /// Component number of every step; steps on a common cycle share one. O(n + e).
    pub fn strong_components(&self) -> Vec<usize> {
        const UNSEEN: usize = usize::MAX;
        let n = self.len();
        let mut index = vec![UNSEEN; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut component = vec![UNSEEN; n];
        let mut next_index = 0;
        let mut next_component = 0;
        // Explicit DFS frames: (step, next edge to look at).
        let mut frames: Vec<(usize, usize)> = Vec::new();
        for root in 0..n {
            if index[root] != UNSEEN {
                continue;
            }
            frames.push((root, 0));
            index[root] = next_index;
            low[root] = next_index;
            next_index += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut edge)) = frames.last_mut() {
                if let Some(e) = self.edges[v].get(*edge) {
                    *edge += 1;
                    let w = e.target;
                    if index[w] == UNSEEN {
                        index[w] = next_index;
                        low[w] = next_index;
                        next_index += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        frames.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                frames.pop();
                if let Some(&(parent, _)) = frames.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component[w] = next_component;
                        if w == v {
                            break;
                        }
                    }
                    next_component += 1;
                }
            }
        }
        component
    }

    /// Breadth-first search inside `start`'s component for the shortest way back to it.
    fn shortest_cycle_through(&self, start: usize, components: &[usize]) -> Cycle {
        let group = components[start];
        let mut came_from: HashMap<usize, usize> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(v) = queue.pop_front() {
            for e in &self.edges[v] {
                let w = e.target;
                if components[w] != group {
                    continue;
                }
                if w == start {
                    let mut path = vec![v];
                    let mut at = v;
                    while at != start {
                        at = came_from[&at];
                        path.push(at);
                    }
                    path.reverse();
                    return Cycle(path);
                }
                if let std::collections::hash_map::Entry::Vacant(slot) = came_from.entry(w) {
                    slot.insert(v);
                    queue.push_back(w);
                }
            }
        }
        // A component of two or more steps always has a cycle through each member.
        Cycle(vec![start])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(deps: &[&[usize]]) -> StepGraph {
        let steps = deps
            .iter()
            .enumerate()
            .map(|(i, d)| (Some(i), d.iter().map(|&x| Some(x)).collect::<Vec<_>>()));
        let (g, problems) = StepGraph::build(steps);
        assert!(problems.is_empty());
        g
    }

    #[test]
    fn toposort_of_diamond() {
        let g = graph(&[&[], &[0], &[0], &[1, 2]]);
        assert_eq!(g.topological_order(), Ok(vec![0, 1, 2, 3]));
    }

    #[test]
    fn finds_each_cycle_in_order() {
        // 0 -> 1 -> 2 -> 0, and 3 <-> 4, 5 alone
        let g = graph(&[&[1], &[2], &[0], &[4], &[3], &[0]]);
        assert_eq!(
            g.topological_order(),
            Err(vec![Cycle(vec![0, 1, 2]), Cycle(vec![3, 4])])
        );
    }

    #[test]
    fn reports_reference_problems() {
        let steps = vec![
            (Some("a"), vec![Some("a"), Some("zz")]),
            (Some("a"), vec![]),
            (None, vec![Some("a"), None]),
        ];
        let (g, problems) = StepGraph::build(steps);
        assert_eq!(
            problems,
            vec![
                GraphProblem::DuplicateId { step: 1, first: 0 },
                GraphProblem::SelfDependency { step: 0, index: 0 },
                GraphProblem::UnknownDependency { step: 0, index: 1 },
            ]
        );
        assert_eq!(
            g.dependencies(2),
            &[DependencyEdge {
                target: 0,
                index: 0
            }]
        );
    }

    #[test]
    fn long_chain_does_not_overflow() {
        let n = 200_000;
        let steps = (0..n).map(|i| {
            (
                Some(i),
                if i == 0 {
                    vec![Some(n - 1)]
                } else {
                    vec![Some(i - 1)]
                },
            )
        });
        let (g, _) = StepGraph::build(steps);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].0.len(), n);
    }
}
