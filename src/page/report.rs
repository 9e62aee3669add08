//! Renders a [`ReportView`] (a report a worker laid out as tables) into an
//! element, with the DOM API directly: one small renderer for every such
//! view, instead of a component per table. Text is set as text, never as
//! markup; attribute names are the view's own, values may be trace data.
//!
//! Tables of one group are alternatives: a radio button per table picks
//! the one shown.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element};

use crate::page::dom::window;
use crate::shared::report_view::{ReportView, ViewCell, ViewTable};

fn el(doc: &Document, tag: &str, class: &str) -> Option<Element> {
    let e = doc.create_element(tag).ok()?;
    if !class.is_empty() {
        e.set_class_name(class);
    }
    Some(e)
}

fn text(doc: &Document, tag: &str, class: &str, s: &str) -> Option<Element> {
    let e = el(doc, tag, class)?;
    e.set_text_content(Some(s));
    Some(e)
}

fn add(parent: &Element, child: Option<Element>) -> Option<()> {
    let child = child?;
    parent.append_child(&child).ok().map(|_| ())
}

fn data(e: &Element, pairs: &[(String, String)]) {
    for (k, v) in pairs {
        let _ = e.set_attribute(&format!("data-{k}"), v);
    }
}

fn cell(doc: &Document, c: &ViewCell, heading: bool) -> Option<Element> {
    let td = el(doc, if heading { "th" } else { "td" }, &c.class)?;
    if heading {
        let _ = td.set_attribute("scope", "row");
    }
    if !c.style.is_empty() {
        let _ = td.set_attribute("style", &c.style);
    }
    if !c.title.is_empty() {
        let _ = td.set_attribute("title", &c.title);
    }
    data(&td, &c.data);
    if !c.bar.is_empty() {
        let bar = el(doc, "div", "stack")?;
        let _ = bar.set_attribute("role", "img");
        let label: Vec<&str> = c.bar.iter().map(|p| p.title.as_str()).collect();
        let _ = bar.set_attribute("aria-label", &label.join("; "));
        for p in &c.bar {
            let part = el(doc, "span", &format!("part {}", p.class))?;
            let _ = part.set_attribute("style", &format!("width:{:.3}%", p.pct));
            let _ = part.set_attribute("title", &p.title);
            bar.append_child(&part).ok()?;
        }
        td.append_child(&bar).ok()?;
    }
    if !c.text.is_empty() {
        td.append_child(&doc.create_text_node(&c.text)).ok()?;
    }
    Some(td)
}

fn table(doc: &Document, t: &ViewTable) -> Option<Element> {
    let wrap = el(doc, "div", "report-table")?;
    if !t.group.is_empty() {
        let _ = wrap.set_attribute("data-group", &t.group);
        let _ = wrap.set_attribute("data-choice", &t.choice);
    }
    if !t.title.is_empty() {
        add(&wrap, text(doc, "h3", "", &t.title))?;
    }
    let scroll = el(doc, "div", "table-scroll")?;
    let tab = el(doc, "table", &t.class)?;
    tab.set_id(&t.id);
    if !t.choice.is_empty() {
        let _ = tab.set_attribute("data-measure", &t.choice);
    }
    let head = el(doc, "thead", "")?;
    let tr = el(doc, "tr", "")?;
    for (k, h) in t.head.iter().enumerate() {
        let class = if t.numeric.get(k) == Some(&true) {
            "num"
        } else {
            ""
        };
        add(&tr, text(doc, "th", class, h))?;
    }
    head.append_child(&tr).ok()?;
    tab.append_child(&head).ok()?;
    let body = el(doc, "tbody", "")?;
    for row in &t.rows {
        let tr = el(doc, "tr", "")?;
        data(&tr, &row.data);
        for (k, c) in row.cells.iter().enumerate() {
            let td = cell(doc, c, k == 0 && c.class == "rowhead")?;
            // A number column's cells align right like its heading.
            if c.class.is_empty() && t.numeric.get(k) == Some(&true) {
                td.set_class_name("num");
            }
            tr.append_child(&td).ok()?;
        }
        body.append_child(&tr).ok()?;
    }
    tab.append_child(&body).ok()?;
    scroll.append_child(&tab).ok()?;
    wrap.append_child(&scroll).ok()?;
    if !t.note.is_empty() {
        add(&wrap, text(doc, "p", "note", &t.note))?;
    }
    Some(wrap)
}

/// Shows the table of `group` whose choice is `choice`, hides the others.
fn pick(root: &Element, group: &str, choice: &str) {
    let Ok(list) = root.query_selector_all(&format!("[data-group=\"{group}\"]")) else {
        return;
    };
    for k in 0..list.length() {
        if let Some(e) = list.item(k).and_then(|n| n.dyn_into::<Element>().ok()) {
            let shown = e.get_attribute("data-choice").as_deref() == Some(choice);
            let _ = e.toggle_attribute_with_force("hidden", !shown);
        }
    }
}

/// Replaces `root`'s content with the report, under an `h2` heading: the
/// root's `aria-label`, when it has one.
pub(crate) fn render(root: &Element, v: &ReportView) {
    let Some(doc) = window().document() else {
        return;
    };
    root.set_text_content(None);
    let _ = (|| -> Option<()> {
        if let Some(title) = root.get_attribute("aria-label") {
            add(root, text(&doc, "h2", "", &title))?;
        }
        for n in &v.notes {
            add(root, text(&doc, "p", "note", n))?;
        }
        let mut groups: Vec<&str> = Vec::new();
        for t in &v.tables {
            if !t.group.is_empty() && !groups.contains(&t.group.as_str()) {
                groups.push(&t.group);
                // The group's choices, before its first table.
                let bar = el(&doc, "div", "controls")?;
                let _ = bar.set_attribute("role", "radiogroup");
                for (k, choice) in v
                    .tables
                    .iter()
                    .filter(|x| x.group == t.group)
                    .map(|x| x.choice.clone())
                    .enumerate()
                {
                    let label = el(&doc, "label", "")?;
                    let input: web_sys::HtmlInputElement =
                        doc.create_element("input").ok()?.dyn_into().ok()?;
                    input.set_type("radio");
                    input.set_name(&t.group);
                    input.set_checked(k == 0);
                    let _ = input.set_attribute("data-choice", &choice);
                    let shown = choice.clone();
                    let (root2, group) = (root.clone(), t.group.clone());
                    let on_change =
                        Closure::<dyn FnMut()>::new(move || pick(&root2, &group, &choice));
                    input.set_onchange(Some(on_change.as_ref().unchecked_ref()));
                    on_change.forget();
                    label.append_child(&input).ok()?;
                    label.append_child(&doc.create_text_node(&shown)).ok()?;
                    bar.append_child(&label).ok()?;
                }
                root.append_child(&bar).ok()?;
            }
            add(root, table(&doc, t))?;
        }
        for g in groups {
            if let Some(first) = v.tables.iter().find(|x| x.group == g) {
                pick(root, g, &first.choice);
            }
        }
        Some(())
    })();
}

/// Adds a button to `root`, under its heading, that calls `on_click`.
pub(crate) fn button(root: &Element, id: &str, label: &str, on_click: impl FnMut() + 'static) {
    let Some(doc) = window().document() else {
        return;
    };
    let Some(b) = text(&doc, "button", "", label) else {
        return;
    };
    b.set_id(id);
    let on_click = Closure::<dyn FnMut()>::new(on_click);
    if let Ok(b) = b.clone().dyn_into::<web_sys::HtmlElement>() {
        b.set_onclick(Some(on_click.as_ref().unchecked_ref()));
    }
    on_click.forget();
    // After the heading, before the notes and tables.
    let heading = root.query_selector("h2").ok().flatten();
    let after = heading.and_then(|h| h.next_sibling());
    let _ = root.insert_before(&b, after.as_ref());
}
