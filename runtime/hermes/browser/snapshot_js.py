"""The page-side half of ``browser_snapshot``: one function injected with
``page.evaluate`` that walks the DOM and returns the compact tree the model reads, and
one that turns a ref back into its element.

Why our own: Playwright's ``page.aria_snapshot(mode="ai")`` took ~200 ms on a page of
2,000 elements (issue 28 asks ≤ 150 ms for the whole tool); this walk takes a few ms.

The text has Playwright's ``ai`` shape::

    - heading "Book a table" [level=1] [ref=e3]
    - textbox "Name" [ref=e5]: Ada
    - combobox "Guests" [ref=e6]:
      - option "1" [selected]
    - link "Docs" [ref=e9]:
      - /url: /docs
    - text: Plain words of a container

What it walks: the document, open shadow roots (slots show what is assigned to them) and
the documents of same-origin iframes (their refs are also kept in the iframe's
window, where ``RESOLVE`` is run again for an element of a frame). What it skips:
closed shadow roots, cross-origin iframes (shown as an empty ``iframe`` line), elements not rendered
(``checkVisibility()``: display none, ``content-visibility``; ``visibility: hidden`` ones
are left out but their visible children kept), ``aria-hidden="true"`` subtrees, hidden
inputs, ``<script>``/``<style>``/``<template>``, decorative images (``alt=""``) and SVG
drawings without a label. Elements without a role (div, span, label, p ...) are not
lines of their own: their text runs become ``- text:`` lines in the nearest element with
a role.

Refs: every element with a role, and every other focusable or clickable one
(``tabindex``, ``onclick``, ``contenteditable``), gets ``eN``, numbered afresh by each
snapshot (stable within one). The ref → element Map is kept on ``window`` under a
non-enumerable property keyed by a Symbol described ``hermes.refs`` (Playwright's Python
API has no way to evaluate in an isolated world): a page script can find it, and at worst
misdirect a click on its own page. A navigation replaces ``window``: every old ref is
then unknown, as is an element removed from the document since.
"""

SNAPSHOT = r"""() => {
  // ---- where the ref maps live (see the module's docstring) -----------------------
  // One per window: a ref inside a same-origin iframe is also kept in the iframe's own
  // window, where Playwright must resolve it to act on it (a handle taken from the top
  // document cannot be clicked inside the frame).
  const cleared = new Set();
  const refsOf = (win) => {
    let key = Object.getOwnPropertySymbols(win).find((s) => s.description === "hermes.refs");
    if (!key) {
      key = Symbol("hermes.refs");
      Object.defineProperty(win, key, {value: new Map(), enumerable: false});
    }
    const refs = win[key];
    if (!cleared.has(win)) { refs.clear(); cleared.add(win); }
    return refs;
  };
  const register = (ref, el) => {
    refsOf(window).set(ref, el);
    const own = el.ownerDocument.defaultView;
    if (own && own !== window) refsOf(own).set(ref, el);
  };
  refsOf(window);
  let counter = 0;

  // ---- roles -----------------------------------------------------------------------
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK",
                        "TITLE", "BASE"]);
  // elements whose text runs on with their neighbours' (no break around them)
  const INLINE = new Set(["B", "I", "EM", "STRONG", "SPAN", "CODE", "SMALL", "SUB", "SUP",
                          "U", "S", "MARK", "ABBR", "TIME", "Q", "CITE", "KBD", "VAR", "DFN",
                          "FONT", "BDI", "BDO", "LABEL", "DATA", "INS", "DEL", "SAMP"]);
  const TAG_ROLES = {
    BUTTON: "button", TEXTAREA: "textbox", NAV: "navigation", MAIN: "main",
    HEADER: "banner", FOOTER: "contentinfo", ASIDE: "complementary", FORM: "form",
    TABLE: "table", TR: "row", TD: "cell", TH: "columnheader", UL: "list", OL: "list",
    LI: "listitem", DIALOG: "dialog", DETAILS: "group", SUMMARY: "button",
    FIELDSET: "group", ARTICLE: "article", HR: "separator", PROGRESS: "progressbar",
    METER: "meter", OPTION: "option", OPTGROUP: "group", IFRAME: "iframe", FRAME: "iframe",
    MENU: "list", DL: "list", DT: "term", DD: "definition", FIGURE: "figure",
    H1: "heading", H2: "heading", H3: "heading", H4: "heading", H5: "heading",
    H6: "heading",
  };
  const INPUT_ROLES = {
    button: "button", submit: "button", reset: "button", image: "button", file: "button",
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton",
    search: "searchbox",
  };
  // roles whose name, when nothing else names them, is their text
  const FROM_CONTENT = new Set(["button", "link", "heading", "cell", "columnheader",
    "rowheader", "option", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
    "checkbox", "radio", "switch", "treeitem", "gridcell", "tooltip", "term"]);
  const LABELLED = new Set(["INPUT", "SELECT", "TEXTAREA", "METER", "PROGRESS", "OUTPUT",
                            "BUTTON"]);

  const roleOf = (el) => {
    const explicit = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (explicit) return explicit === "presentation" ? "none" : explicit;
    const tag = el.tagName;
    if (tag === "A" || tag === "AREA") return el.hasAttribute("href") ? "link" : "";
    if (tag === "INPUT") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      if (el.hasAttribute("list") && !INPUT_ROLES[type]) return "combobox";
      return INPUT_ROLES[type] || "textbox";
    }
    if (tag === "SELECT") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (tag === "IMG") return el.getAttribute("alt") === "" ? "none" : "img";
    if (tag === "SECTION") return el.hasAttribute("aria-label") ||
      el.hasAttribute("aria-labelledby") ? "region" : "";
    if (tag === "svg") return el.hasAttribute("aria-label") || el.querySelector(":scope > title")
      ? "img" : "none";
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable))
      return "textbox";
    return TAG_ROLES[tag] || "";
  };

  // ---- names -----------------------------------------------------------------------
  const squeeze = (text) => text.replace(/\s+/g, " ").trim();
  const clip = (text) => text.length > 300 ? text.slice(0, 299) + "…" : text;

  // the visible words under a node (img alts included; controls, hidden parts left out)
  const textOf = (node, skip) => {
    let out = "";
    const add = (n) => {
      if (n.nodeType === 3) { out += n.data; return; }
      if (n.nodeType !== 1 || n === skip || SKIP.has(n.tagName)) return;
      if (n.getAttribute("aria-hidden") === "true") return;
      if (n.tagName === "SELECT" || n.tagName === "TEXTAREA") return;
      if (n.tagName === "IMG") { out += " " + (n.getAttribute("alt") || "") + " "; return; }
      if (n.tagName === "INPUT") return;
      const block = !INLINE.has(n.tagName);
      if (block) out += " ";
      for (const child of (n.shadowRoot || n).childNodes) add(child);
      if (block) out += " ";
    };
    add(node);
    return squeeze(out);
  };

  const labelledBy = (el) => {
    const ids = (el.getAttribute("aria-labelledby") || "").trim();
    if (!ids) return "";
    const root = el.getRootNode();
    return squeeze(ids.split(/\s+/).map((id) => {
      const other = root.getElementById ? root.getElementById(id) : null;
      return other ? textOf(other) : "";
    }).join(" "));
  };

  const nameOf = (el, role) => {
    let name = labelledBy(el) || squeeze(el.getAttribute("aria-label") || "");
    if (name) return clip(name);
    const tag = el.tagName;
    if (LABELLED.has(tag) && el.labels && el.labels.length)
      name = squeeze([...el.labels].map((label) => textOf(label, el)).join(" "));
    if (!name && tag === "INPUT") {
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (type === "image") name = el.getAttribute("alt") || "";
      else if (type === "submit" || type === "reset" || type === "button")
        name = el.value || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : "");
    }
    if (!name && (tag === "IMG" || tag === "AREA")) name = el.getAttribute("alt") || "";
    if (!name && tag === "FIELDSET") {
      const legend = el.querySelector(":scope > legend");
      if (legend) name = textOf(legend);
    }
    if (!name && tag === "TABLE" && el.caption) name = textOf(el.caption);
    if (!name && tag === "svg") {
      const title = el.querySelector(":scope > title");
      if (title) name = title.textContent;
    }
    if (!name && FROM_CONTENT.has(role)) name = textOf(el);
    if (!name) name = el.getAttribute("title") || el.getAttribute("placeholder") || "";
    return clip(squeeze(name));
  };

  // ---- states ----------------------------------------------------------------------
  // the focused element, and the hosts and frames it is inside of
  const active = new Set();
  for (let focused = document.activeElement; focused && !active.has(focused);) {
    active.add(focused);
    let inner = null;
    try {
      inner = focused.shadowRoot ? focused.shadowRoot.activeElement
        : focused.contentDocument ? focused.contentDocument.activeElement : null;
    } catch (e) { inner = null; }  // a cross-origin frame
    focused = inner;
  }
  const statesOf = (el, role) => {
    const out = [];
    const tag = el.tagName;
    if (active.has(el) && el.tagName !== "BODY") out.push("[active]");
    if (role === "heading") {
      const level = el.getAttribute("aria-level") || (/^H[1-6]$/.test(tag) ? tag[1] : "");
      if (level) out.push(`[level=${level}]`);
    }
    const checked = el.getAttribute("aria-checked");
    if (tag === "INPUT" && (el.type === "checkbox" || el.type === "radio")) {
      if (el.indeterminate) out.push("[checked=mixed]");
      else if (el.checked) out.push("[checked]");
    } else if (checked === "true") out.push("[checked]");
    else if (checked === "mixed") out.push("[checked=mixed]");
    if (el.disabled === true || el.getAttribute("aria-disabled") === "true")
      out.push("[disabled]");
    if (el.getAttribute("aria-expanded") === "true" ||
        (tag === "SUMMARY" && el.parentElement && el.parentElement.tagName === "DETAILS" &&
         el.parentElement.open))
      out.push("[expanded]");
    if (el.getAttribute("aria-pressed") === "true") out.push("[pressed]");
    if (tag === "OPTION" ? el.selected : el.getAttribute("aria-selected") === "true")
      out.push("[selected]");
    return out;
  };

  const valueOf = (el, role) => {
    const tag = el.tagName;
    if (tag === "TEXTAREA") return el.value;
    if (tag === "INPUT" && (role === "textbox" || role === "searchbox" ||
        role === "spinbutton" || role === "combobox" || role === "slider")) {
      return el.type === "password" && el.value ? "•".repeat(8) : el.value;
    }
    if (role === "textbox" && el.isContentEditable) return el.innerText;
    return "";
  };

  const focusable = (el) => el.hasAttribute("onclick") ||
    (el.hasAttribute("tabindex") && el.tabIndex >= 0);

  // ---- the walk --------------------------------------------------------------------
  // An item is {text} (a run of words) or {role, name, states, ref, value, children}.
  const pushText = (items, text) => {
    const last = items[items.length - 1];
    if (last && last.text !== undefined && !last.closed) last.text += text;
    else items.push({text});
  };
  const breakText = (items) => {
    const last = items[items.length - 1];
    if (last && last.text !== undefined) last.closed = true;
  };

  const childrenOf = (node) => {
    if (node.shadowRoot) return node.shadowRoot.childNodes;
    if (node.tagName === "SLOT") {
      const assigned = node.assignedNodes({flatten: true});
      return assigned.length ? assigned : node.childNodes;
    }
    if (node.tagName === "IFRAME" || node.tagName === "FRAME") {
      let inner = null;
      try { inner = node.contentDocument; } catch (e) { inner = null; }  // cross-origin
      return inner && inner.body ? [inner.body] : [];
    }
    return node.childNodes;
  };

  const walkChildren = (node, items) => {
    for (const child of childrenOf(node)) walk(child, items);
  };

  const walk = (node, items) => {
    if (node.nodeType === 3) { pushText(items, node.data); return; }
    if (node.nodeType !== 1 || SKIP.has(node.tagName)) return;
    const el = node;
    if (el.getAttribute("aria-hidden") === "true") return;
    if (el.tagName === "INPUT" && el.type === "hidden") return;
    if (!el.checkVisibility()) {
      // display: contents has no box of its own but its children do
      if (getComputedStyle(el).display !== "contents") return;
    } else if (!el.checkVisibility({visibilityProperty: true})) {
      // visibility: hidden: its own text is not shown, a child may be visible again
      for (const child of childrenOf(el)) if (child.nodeType === 1) walk(child, items);
      return;
    }
    let role = roleOf(el);
    const inline = INLINE.has(el.tagName);
    if (!role && focusable(el)) role = "generic";
    if (!role || role === "none" || role === "generic" && !focusable(el)) {
      if (!inline) breakText(items);
      if (el.tagName === "BR") { breakText(items); return; }
      if (el.tagName === "svg") return;  // a drawing without a label
      walkChildren(el, items);
      if (!inline) breakText(items);
      return;
    }
    const item = {role, name: nameOf(el, role), states: statesOf(el, role), ref: "",
                  value: valueOf(el, role), children: []};
    // options of a native select are read by browser_select, not clicked: no refs
    if (!(el.tagName === "OPTION" || el.tagName === "OPTGROUP")) {
      item.ref = "e" + (++counter);
      register(item.ref, el);
    }
    if (el.tagName === "SELECT") {
      for (const option of el.querySelectorAll("option")) {
        if (option.hidden) continue;
        item.children.push({role: "option", name: clip(squeeze(option.label || option.text)),
                            states: option.selected ? ["[selected]"] : [], ref: "",
                            value: "", children: []});
      }
    } else if (el.tagName !== "TEXTAREA" && el.tagName !== "svg" && role !== "textbox") {
      walkChildren(el, item.children);
    }
    if (role === "link" && el.getAttribute("href"))
      item.children.push({url: el.getAttribute("href")});
    breakText(items);
    items.push(item);
  };

  // ---- the text --------------------------------------------------------------------
  const tidy = (items) => {
    const out = [];
    for (const item of items) {
      if (item.text === undefined) { out.push(item); continue; }
      const text = squeeze(item.text);
      if (text) out.push({text});
    }
    return out;
  };

  const lines = [];
  const write = (items, indent) => {
    for (const item of tidy(items)) {
      if (item.text !== undefined) { lines.push(`${indent}- text: ${item.text}`); continue; }
      if (item.url !== undefined) { lines.push(`${indent}- /url: ${item.url}`); continue; }
      let head = `${indent}- ${item.role}`;
      if (item.name) head += " " + JSON.stringify(item.name);
      for (const state of item.states) head += " " + state;
      if (item.ref) head += ` [ref=${item.ref}]`;
      let children = tidy(item.children);
      // a name taken from the text need not be said twice
      if (children.length === 1 && children[0].text === item.name) children = [];
      if (children.length && children.every((c) => c.text !== undefined && c.text === item.name
                                             || c.url !== undefined)) {
        children = children.filter((c) => c.url !== undefined);
      }
      const value = item.value ? squeeze(item.value) : "";
      if (!children.length) {
        lines.push(value ? `${head}: ${value}` : head);
      } else if (!value && children.length === 1 && children[0].text !== undefined) {
        lines.push(`${head}: ${children[0].text}`);
      } else {
        lines.push(head + ":");
        if (value) lines.push(`${indent}  - text: ${value}`);
        write(children, indent + "  ");
      }
    }
  };
  const top = [];
  if (document.body) walkChildren(document.body, top);
  write(top, "");
  return lines.join("\n");
}"""
"""``page.evaluate(SNAPSHOT)``: the page as the model reads it (refs registered)."""

RESOLVE = r"""(ref) => {
  const key = Object.getOwnPropertySymbols(window).find((s) => s.description === "hermes.refs");
  const element = key ? window[key].get(ref) : undefined;
  return element && element.isConnected ? element : null;
}"""
"""``page.evaluate_handle(RESOLVE, ref)``: the element of ``ref`` in the last snapshot of
this document, or null (navigated since, or removed)."""
