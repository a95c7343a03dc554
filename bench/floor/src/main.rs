//! The size floor: what any Leptos 0.8 CSR app costs before it does anything
//! of its own (signals, an event handler, a keyed list).

use leptos::prelude::*;

fn main() {
    mount_to_body(|| {
        let count = RwSignal::new(0);
        view! {
            <h1>"Floor"</h1>
            <button on:click=move |_| count.update(|c| *c += 1)>{move || count.get()}</button>
            <ul>
                <For each=move || 0..count.get() key=|i| *i let:i>
                    <li>{i}</li>
                </For>
            </ul>
        }
    });
}
