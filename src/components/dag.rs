//! The plan drawn as a DAG in SVG from the domain crate's layout: steps with
//! status icon and text, dependency arrows, the critical path, cycles and steps
//! blocked by a failure marked; click or focus a step for its details; zoom.

use crate::components::status::{step_icon, step_label};
use countersign_domain::graph::StepGraph;
use countersign_domain::layout::{layout_plan, LayoutOptions, PlanLayout};
use countersign_domain::lifecycle::steps_blocked_by_failure;
use countersign_domain::model::Plan;
use countersign_domain::text::reveal;
use countersign_markup::escape;
use leptos::prelude::*;
use std::sync::Arc;

const NODE: LayoutOptions = LayoutOptions {
    node_width: 220.0,
    node_height: 76.0,
    node_gap: 28.0,
    layer_gap: 56.0,
};
const MARGIN: f64 = 12.0;

/// What the drawing needs, computed once per plan.
struct Drawing {
    layout: PlanLayout,
    blocked: Vec<bool>,
    dependents: Vec<Vec<usize>>,
}

/// The plan's DAG with its step details panel.
#[component]
pub fn PlanGraph(plan: Arc<Plan>) -> impl IntoView {
    let graph = StepGraph::of_plan(&plan);
    let drawing = Arc::new(Drawing {
        layout: layout_plan(&plan, &NODE),
        blocked: steps_blocked_by_failure(&plan, &graph),
        dependents: graph.dependents(),
    });
    let selected = RwSignal::new(None::<usize>);
    let zoom = RwSignal::new(if plan.steps.len() > 60 { 0.6_f64 } else { 1.0 });
    let details = (plan.clone(), drawing.clone());
    Effect::new(move |_| crate::browser::mark("countersign:plan-drawn"));
    view! {
        <div class="dag">
            <DagToolbar plan=plan.clone() drawing=drawing.clone() zoom />
            <DagCanvas plan drawing zoom selected />
            <div class="legend subtle">
                <span><span class="swatch swatch-critical"></span>" critical path"</span>
                <span><span class="swatch swatch-cycle"></span>" dependency cycle"</span>
                <span>"⊘ dashed box: blocked by a failed dependency"</span>
            </div>
            {move || selected.get().map(|i| view! { <StepDetails plan=details.0.clone() drawing=details.1.clone() index=i /> })}
        </div>
    }
}

/// What the plan is (steps, layers, critical path, a cycle) and the zoom.
#[component]
fn DagToolbar(plan: Arc<Plan>, drawing: Arc<Drawing>, zoom: RwSignal<f64>) -> impl IntoView {
    let critical_len = drawing.layout.critical_path.len();
    let has_cycle = drawing.layout.edges.iter().any(|e| e.on_cycle);
    view! {
        <div class="dag-toolbar" role="toolbar" aria-label="Plan drawing">
            <span class="subtle">
                {format!("{} steps · {} layers", plan.steps.len(), drawing.layout.layers)}
                {(critical_len > 0).then(|| format!(" · critical path {critical_len} steps"))}
            </span>
            {has_cycle.then(|| view! { <span class="badge badge-danger">"cycle: cannot run"</span> })}
            <span class="spacer"></span>
            <button type="button" on:click=move |_| zoom.update(|z| *z = (*z / 1.25).max(0.2)) aria-label="Zoom out">"−"</button>
            <span class="zoom-level" aria-live="polite">{move || format!("{:.0}%", zoom.get() * 100.0)}</span>
            <button type="button" on:click=move |_| zoom.update(|z| *z = (*z * 1.25).min(2.0)) aria-label="Zoom in">"+"</button>
            <button type="button" on:click=move |_| zoom.set(1.0)>"100%"</button>
        </div>
    }
}

/// The drawing. It is static: its markup is built as one string (every text
/// escaped) and parsed natively by the browser, which is several times
/// faster than creating thousands of nodes one by one. One delegated
/// handler on the SVG serves clicks and focus of every step.
#[component]
fn DagCanvas(
    plan: Arc<Plan>,
    drawing: Arc<Drawing>,
    zoom: RwSignal<f64>,
    selected: RwSignal<Option<usize>>,
) -> impl IntoView {
    let width = drawing.layout.width + 2.0 * MARGIN;
    let height = drawing.layout.height + 2.0 * MARGIN;
    let edges = edges_markup(&drawing.layout);
    let nodes = nodes_markup(&plan, &drawing);
    let pick = move |target: Option<web_sys::EventTarget>| {
        use wasm_bindgen::JsCast;
        let step = target
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-step]").ok().flatten())
            .and_then(|el| el.get_attribute("data-step"))
            .and_then(|i| i.parse::<usize>().ok());
        if step.is_some() {
            selected.set(step);
        }
    };
    let canvas = NodeRef::<leptos::html::Div>::new();
    mark_selected(canvas, selected);
    view! {
        <div class="dag-canvas" tabindex="-1" node_ref=canvas>
            <svg
                on:click=move |ev| pick(ev.target())
                on:focusin=move |ev| pick(ev.target())
                role="group"
                aria-label=format!("Plan graph: {} steps", plan.steps.len())
                viewBox=format!("0 0 {width:.0} {height:.0}")
                width=move || format!("{:.0}", width * zoom.get())
                height=move || format!("{:.0}", height * zoom.get())
            >
                <defs>
                    <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" class="arrow-head" />
                    </marker>
                </defs>
                <g class="edges" inner_html=edges></g>
                <g class="nodes" inner_html=nodes></g>
            </svg>
        </div>
    }
}

/// Moves the `selected` class from the step selected before to the one
/// selected now (the drawing's markup is not re-rendered).
fn mark_selected(canvas: NodeRef<leptos::html::Div>, selected: RwSignal<Option<usize>>) {
    Effect::new(move |previous: Option<Option<usize>>| {
        let now = selected.get();
        if let Some(root) = canvas.get() {
            for (index, on) in [(previous.flatten(), false), (now, true)] {
                let node = index.and_then(|i| {
                    root.query_selector(&format!("[data-step=\"{i}\"]"))
                        .ok()
                        .flatten()
                });
                if let Some(node) = node {
                    let _ = node.class_list().toggle_with_force("selected", on);
                }
            }
        }
        now
    });
}

#[component]
fn StepDetails(plan: Arc<Plan>, drawing: Arc<Drawing>, index: usize) -> impl IntoView {
    let step = plan.steps[index].clone();
    let name = |i: usize| format!("{}. {}", i + 1, reveal::prose(&plan.steps[i].description));
    let depends_on: Vec<String> = step
        .dependencies()
        .iter()
        .map(|d| match plan.steps.iter().position(|s| s.step_id == *d) {
            Some(i) => name(i),
            None => format!("{d} (no such step)"),
        })
        .collect();
    let needed_by: Vec<String> = drawing.dependents[index].iter().map(|&i| name(i)).collect();
    let blocked = drawing.blocked.get(index).copied().unwrap_or(false);
    let critical = drawing.layout.critical_path.contains(&index);
    let list = |items: Vec<String>| {
        if items.is_empty() {
            view! { <span class="subtle">"none"</span> }.into_any()
        } else {
            view! { <ul>{items.into_iter().map(|i| view! { <li>{i}</li> }).collect_view()}</ul> }
                .into_any()
        }
    };
    view! {
        <section class="step-details" aria-label="Step details" aria-live="polite">
            <h3>{format!("Step {}", index + 1)}</h3>
            <p class="step-description">{reveal::prose(&step.description)}</p>
            <dl class="fields">
                <dt>"Status"</dt>
                <dd>{format!("{} {}", step_icon(step.status), step_label(step.status))}{blocked.then_some(" (blocked by a failed dependency)")}</dd>
                <dt>"Agent role"</dt>
                <dd>{step.agent_role.as_deref().map_or_else(|| "none".into(), reveal::label)}</dd>
                <dt>"Step id"</dt>
                <dd><code>{step.step_id.to_string()}</code></dd>
                <dt>"On the critical path"</dt>
                <dd>{if critical { "yes" } else { "no" }}</dd>
                <dt>"Depends on"</dt>
                <dd>{list(depends_on)}</dd>
                <dt>"Needed by"</dt>
                <dd>{list(needed_by)}</dd>
            </dl>
        </section>
    }
}

/// The arrows as SVG markup.
fn edges_markup(layout: &PlanLayout) -> String {
    let mut out = String::with_capacity(layout.edges.len() * 96);
    for edge in &layout.edges {
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

/// The steps as SVG markup: a focusable, labelled group per step.
fn nodes_markup(plan: &Plan, drawing: &Drawing) -> String {
    let mut out = String::with_capacity(plan.steps.len() * 640);
    for (i, step) in plan.steps.iter().enumerate() {
        let place = drawing.layout.nodes[i];
        let blocked = drawing.blocked.get(i).copied().unwrap_or(false);
        let critical = drawing.layout.critical_path.contains(&i);
        let role = step
            .agent_role
            .as_deref()
            .map_or_else(|| "no role".into(), reveal::label);
        let description = reveal::prose(&step.description);
        let label = format!(
            "Step {}: {}. Status {}{}. Role {}.",
            i + 1,
            description,
            step_label(step.status),
            if blocked {
                ", blocked by a failed dependency"
            } else {
                ""
            },
            role
        );
        // The name is what the node shows (so speech matches what a sighted
        // user reads and says); the whole step is its description, kept
        // outside the node. Each text ends in a space (not drawn) so the
        // node's text reads as words.
        let id = |part: &str| format!("dag-step-{i}-{part}");
        let lines = wrap(&description, 30, 2);
        let names: Vec<String> = std::iter::once(id("status"))
            .chain((0..lines.len()).map(|k| id(&format!("line{k}"))))
            .chain(std::iter::once(id("role")))
            .collect();
        out.push_str(&format!(
            "<defs><desc id=\"{}\">{}</desc></defs><g class=\"node step-{}{}{}\" data-step=\"{i}\" transform=\"translate({:.1},{:.1})\" tabindex=\"0\" role=\"button\" aria-labelledby=\"{}\" aria-describedby=\"{}\">",
            id("about"),
            escape(&label),
            step.status.as_str(),
            if blocked { " node-blocked" } else { "" },
            if critical { " node-critical" } else { "" },
            place.x + MARGIN,
            place.y + MARGIN,
            names.join(" "),
            id("about"),
        ));
        out.push_str(&format!(
            "<rect width=\"{}\" height=\"{}\" rx=\"8\"/><text id=\"{}\" x=\"10\" y=\"20\" class=\"node-status\">{} {}{} </text>",
            NODE.node_width,
            NODE.node_height,
            id("status"),
            step_icon(step.status),
            step_label(step.status),
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
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    fn escape_leaves_only_text() {
        assert_eq!(
            escape(r#"<img src=x onerror="a()">'&"#),
            "&lt;img src=x onerror=&quot;a()&quot;&gt;&#39;&amp;"
        );
    }

    #[wasm_bindgen_test]
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
