//! The plan drawn as a DAG in SVG from the domain crate's layout: steps with
//! status icon and text, dependency arrows, the critical path, cycles and steps
//! blocked by a failure marked; click or focus a step for its details; zoom.

use countersign_domain::model::Plan;
use countersign_domain::text::reveal;
use countersign_markup::plan_graph::{GraphDrawing, ARROW, LEGEND};
use leptos::prelude::*;
use std::sync::Arc;

/// The plan's DAG with its step details panel.
#[component]
pub fn PlanGraph(plan: Arc<Plan>) -> impl IntoView {
    let drawing = Arc::new(GraphDrawing::of(&plan));
    let selected = RwSignal::new(None::<usize>);
    let first = GraphDrawing::first_zoom(plan.steps.len());
    let zoom = RwSignal::new(first);
    let details = (plan.clone(), drawing.clone());
    Effect::new(move |_| crate::browser::mark("countersign:plan-drawn"));
    view! {
        <div class="dag">
            <DagToolbar plan=plan.clone() drawing=drawing.clone() zoom first />
            <DagCanvas plan drawing zoom selected />
            <div class="legend subtle" inner_html=LEGEND></div>
            {move || selected.get().map(|i| view! { <StepDetails plan=details.0.clone() drawing=details.1.clone() index=i /> })}
        </div>
    }
}

/// What the plan is (steps, layers, critical path, a cycle) and the zoom,
/// which Reset sets back to `first`, the zoom the plan opened at.
#[component]
fn DagToolbar(
    plan: Arc<Plan>,
    drawing: Arc<GraphDrawing>,
    zoom: RwSignal<f64>,
    first: f64,
) -> impl IntoView {
    view! {
        <div class="dag-toolbar" role="toolbar" aria-label="Plan drawing">
            <span class="subtle">{drawing.facts(plan.steps.len())}</span>
            {drawing.has_cycle().then(|| view! { <span class="badge badge-danger">"cycle: cannot run"</span> })}
            <span class="spacer"></span>
            <button type="button" on:click=move |_| zoom.update(|z| *z = (*z / 1.25).max(0.2)) aria-label="Zoom out">"−"</button>
            <span class="zoom-level" aria-live="polite">{move || format!("{:.0}%", zoom.get() * 100.0)}</span>
            <button type="button" on:click=move |_| zoom.update(|z| *z = (*z * 1.25).min(2.0)) aria-label="Zoom in">"+"</button>
            <button type="button" on:click=move |_| zoom.set(first) disabled=move || zoom.get() == first
                title=format!("Back to {:.0}%", first * 100.0)>"Reset"</button>
        </div>
    }
}

/// The drawing. It is static: its markup is built as one string (every text
/// escaped, by countersign-markup, which the server's drawing of a review
/// shows too) and parsed natively by the browser, which is several times
/// faster than creating thousands of nodes one by one. One delegated
/// handler on the SVG serves clicks and focus of every step.
#[component]
fn DagCanvas(
    plan: Arc<Plan>,
    drawing: Arc<GraphDrawing>,
    zoom: RwSignal<f64>,
    selected: RwSignal<Option<usize>>,
) -> impl IntoView {
    let (width, height) = drawing.size();
    let edges = drawing.edges();
    let nodes = drawing.nodes(&plan, true);
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
                <defs inner_html=ARROW></defs>
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
fn StepDetails(plan: Arc<Plan>, drawing: Arc<GraphDrawing>, index: usize) -> impl IntoView {
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
                <dd>{format!("{} {}", step.status.symbol(), step.status.words())}{blocked.then_some(" (blocked by a failed dependency)")}</dd>
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
