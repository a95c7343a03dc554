//! A plan's DAG as SVG markup from the domain crate's layout: each step with
//! its status in symbol and words, the dependency arrows, the critical path,
//! cycles and the steps a failure blocks. The app's plan graph sets this as
//! its drawing's HTML (and adds zoom, selection and step details); the
//! server's drawing of a review shows it, still, before the app has loaded.

use super::escape;
use countersign_domain::graph::StepGraph;
use countersign_domain::layout::{layout_plan, LayoutOptions, PlanLayout};
use countersign_domain::lifecycle::steps_blocked_by_failure;
use countersign_domain::model::Plan;
use countersign_domain::text::reveal;

const NODE: LayoutOptions = LayoutOptions {
    node_width: 220.0,
    node_height: 76.0,
    node_gap: 28.0,
    layer_gap: 56.0,
};
const MARGIN: f64 = 12.0;

/// The arrow head the edges end with (the SVG's `<defs>`).
pub const ARROW: &str = "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" class=\"arrow-head\"/></marker>";

/// What the drawing's marks mean (the inside of its `.legend`).
pub const LEGEND: &str = "<span><span class=\"swatch swatch-critical\"></span> critical path</span><span><span class=\"swatch swatch-cycle\"></span> dependency cycle</span><span>⊘ dashed box: blocked by a failed dependency</span>";

/// A plan laid out for drawing, computed once per plan.
pub struct GraphDrawing {
    /// Where each step and arrow goes, the critical path and the layers.
    pub layout: PlanLayout,
    /// Whether each step waits on a failed one.
    pub blocked: Vec<bool>,
    /// The steps that depend on each step.
    pub dependents: Vec<Vec<usize>>,
}

impl GraphDrawing {
    /// `plan` laid out.
    pub fn of(plan: &Plan) -> Self {
        let graph = StepGraph::of_plan(plan);
        GraphDrawing {
            layout: layout_plan(plan, &NODE),
            blocked: steps_blocked_by_failure(plan, &graph),
            dependents: graph.dependents(),
        }
    }

    /// The drawing's width and height at 100 %.
    pub fn size(&self) -> (f64, f64) {
        (
            self.layout.width + 2.0 * MARGIN,
            self.layout.height + 2.0 * MARGIN,
        )
    }

    /// The zoom a plan of `steps` steps is first shown at (a large one
    /// smaller, to see more of it at once).
    pub fn first_zoom(steps: usize) -> f64 {
        if steps > 60 {
            0.6
        } else {
            1.0
        }
    }

    /// What the plan is in a line: "12 steps · 4 layers · critical path 5 steps".
    pub fn facts(&self, steps: usize) -> String {
        let critical = self.layout.critical_path.len();
        let mut facts = format!("{steps} steps · {} layers", self.layout.layers);
        if critical > 0 {
            facts.push_str(&format!(" · critical path {critical} steps"));
        }
        facts
    }

    /// Whether the dependencies go round in a cycle (the plan cannot run).
    pub fn has_cycle(&self) -> bool {
        self.layout.edges.iter().any(|e| e.on_cycle)
    }

    /// The arrows.
    pub fn edges(&self) -> String {
        let mut out = String::with_capacity(self.layout.edges.len() * 96);
        for edge in &self.layout.edges {
            let class = if edge.on_cycle {
                "edge edge-cycle"
            } else if edge.critical {
                "edge edge-critical"
            } else {
                "edge"
            };
            out.push_str("<polyline class=\"");
            out.push_str(class);
            out.push_str("\" marker-end=\"url(#arrow)\" points=\"");
            for (x, y) in &edge.points {
                out.push_str(&format!("{:.1},{:.1} ", x + MARGIN, y + MARGIN));
            }
            out.push_str("\"/>");
        }
        out
    }

    /// The steps of `plan`: a labelled group each, a button to focus and
    /// select when `selectable` (the app's), else only read.
    pub fn nodes(&self, plan: &Plan, selectable: bool) -> String {
        let mut out = String::with_capacity(plan.steps.len() * 640);
        for (i, step) in plan.steps.iter().enumerate() {
            let place = self.layout.nodes[i];
            let blocked = self.blocked.get(i).copied().unwrap_or(false);
            let critical = self.layout.critical_path.contains(&i);
            let role = step
                .agent_role
                .as_deref()
                .map_or_else(|| "no role".into(), reveal::label);
            let description = reveal::prose(&step.description);
            let label = format!(
                "Step {}: {}. Status {}{}. Role {}.",
                i + 1,
                description,
                step.status.words(),
                if blocked {
                    ", blocked by a failed dependency"
                } else {
                    ""
                },
                role
            );
            // The name is what the node shows (so speech matches what a
            // sighted user reads and says); the whole step is its
            // description, kept outside the node. Each text ends in a space
            // (not drawn) so the node's text reads as words.
            let id = |part: &str| format!("dag-step-{i}-{part}");
            let lines = wrap(&description, 30, 2);
            let names: Vec<String> = std::iter::once(id("status"))
                .chain((0..lines.len()).map(|k| id(&format!("line{k}"))))
                .chain(std::iter::once(id("role")))
                .collect();
            out.push_str(&format!(
                "<defs><desc id=\"{}\">{}</desc></defs><g class=\"node step-{}{}{}\" data-step=\"{i}\" transform=\"translate({:.1},{:.1})\" {} aria-labelledby=\"{}\" aria-describedby=\"{}\">",
                id("about"),
                escape(&label),
                step.status.as_str(),
                if blocked { " node-blocked" } else { "" },
                if critical { " node-critical" } else { "" },
                place.x + MARGIN,
                place.y + MARGIN,
                if selectable { "tabindex=\"0\" role=\"button\"" } else { "role=\"group\"" },
                names.join(" "),
                id("about"),
            ));
            out.push_str(&format!(
                "<rect width=\"{}\" height=\"{}\" rx=\"8\"/><text id=\"{}\" x=\"10\" y=\"20\" class=\"node-status\">{} {}{} </text>",
                NODE.node_width,
                NODE.node_height,
                id("status"),
                step.status.symbol(),
                step.status.words(),
                if blocked { " · blocked" } else { "" }
            ));
            for (k, line) in lines.iter().enumerate() {
                out.push_str(&format!(
                    "<text id=\"{}\" x=\"10\" y=\"{}\" class=\"node-text\">{} </text>",
                    id(&format!("line{k}")),
                    40 + 15 * k,
                    escape(line)
                ));
            }
            out.push_str(&format!(
                "<text id=\"{}\" x=\"{}\" y=\"20\" class=\"node-role\" text-anchor=\"end\">{}</text></g>",
                id("role"),
                NODE.node_width - 10.0,
                escape(&truncate(&role, 16))
            ));
        }
        out
    }

    /// The whole drawing of `plan` to read, as the app first shows it but
    /// with nothing to press: its facts, the graph and the legend.
    pub fn still(&self, plan: &Plan) -> String {
        let steps = plan.steps.len();
        let (width, height) = self.size();
        let zoom = Self::first_zoom(steps);
        let cycle = if self.has_cycle() {
            "<span class=\"badge badge-danger\">cycle: cannot run</span>"
        } else {
            ""
        };
        format!(
            "<div class=\"dag\"><div class=\"dag-toolbar\"><span class=\"subtle\">{}</span>{cycle}</div><div class=\"dag-canvas\"><svg role=\"group\" aria-label=\"Plan graph: {steps} steps\" viewBox=\"0 0 {width:.0} {height:.0}\" width=\"{:.0}\" height=\"{:.0}\"><defs>{ARROW}</defs><g class=\"edges\">{}</g><g class=\"nodes\">{}</g></svg></div><div class=\"legend subtle\">{LEGEND}</div></div>",
            self.facts(steps),
            width * zoom,
            height * zoom,
            self.edges(),
            self.nodes(plan, false),
        )
    }
}

/// Splits text into at most `lines` lines of about `width` characters; the last
/// line ends with an ellipsis when text was left out.
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut cut = false;
    for word in text.split_whitespace() {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut current));
            if out.len() == lines {
                cut = true;
                break;
            }
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !cut && !current.is_empty() {
        out.push(current);
    }
    let mut out: Vec<String> = out.iter().map(|line| truncate(line, width)).collect();
    if let (true, Some(last)) = (cut, out.last_mut()) {
        if !last.ends_with('…') {
            *last = format!("{}…", truncate(last, width - 1).trim_end_matches('…'));
        }
    }
    out
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_cuts_to_lines_with_an_ellipsis() {
        assert_eq!(wrap("Export user table", 30, 2), vec!["Export user table"]);
        let lines = wrap(
            "Rotate billing database password in eu-west and verify every replica",
            30,
            2,
        );
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| l.chars().count() <= 30), "{lines:?}");
        assert!(lines[1].ends_with('…'), "{lines:?}");
        assert_eq!(wrap("", 30, 2), Vec::<String>::new());
        assert_eq!(truncate("abcdefghijklmnopqrstuvwxyz", 5), "abcd…");
    }
}
