/* jurybox item explorer: filters, search, sorting and one item's detail, drawn from the data
   block #jb-data. Runs under a CSP that allows only this script (by hash): no network, no eval;
   every judge or dataset text goes into the page through textContent, never as markup.
   State lives in the fragment: #items?judge=<j>&filter=<f>&q=<text>&sort=<key>&dir=-1&item=<id>,
   so a sorted, filtered view and an opened item can be bookmarked and shared.
   A judge's verdicts stand in fixed, labelled columns, one per presentation order (named by the
   arm shown first) and retest, the same for every item: never the item's own random order.
   Past some thousands of items the block holds an index (data.paged; each item without its
   texts, with its verdicts "s" and failure count "n") and the full rows are in side files
   report_items/page-NNNN.js, each calling jbItemsPage(page, gzip+base64 JSON); a file is added
   as a script (allowed by 'strict-dynamic') when an item on its page is opened. */
(function () {
  "use strict";
  var PAGE = 250;
  var root = document.getElementById("items");
  if (!root) { return; }
  var block = document.getElementById("jb-data");
  var els = {
    judge: root.querySelector("[data-judge-select]"),
    search: root.querySelector("[data-search]"),
    status: root.querySelector("[data-status]"),
    head: root.querySelector("table.jb-items thead"),
    body: root.querySelector("table.jb-items tbody"),
    detail: root.querySelector("[data-detail]"),
    prev: root.querySelector("[data-page=prev]"),
    next: root.querySelector("[data-page=next]"),
    filters: Array.prototype.slice.call(root.querySelectorAll("[data-filter]"))
  };
  var data = null;
  var state = {judge: "", filter: "", q: "", item: "", sort: "", dir: 1, page: 0};
  var KEYS = ["judge", "filter", "q", "sort", "dir", "item"];
  var orders = [];  // every presentation order met, in the fixed order of the columns
  var written = "";
  var haystacks = null;
  var pages = {};  // paged: page number -> its rows, "loading" or an error text

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }

  function decode() {
    var text = block ? block.textContent : "";
    if (!block || block.getAttribute("data-encoding") !== "gzip+base64") {
      return Promise.resolve(JSON.parse(text || "null"));
    }
    return unpack(text);
  }

  function unpack(text) {
    var binary = atob(text.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  // --- state <-> fragment ------------------------------------------------------------------
  function parseHash(hash) {
    var found = {judge: "", filter: "", q: "", sort: "", dir: "", item: ""};
    if (hash.indexOf("#items") !== 0) { return null; }
    var query = hash.slice("#items".length).replace(/^\?/, "");
    query.split("&").forEach(function (pair) {
      if (!pair) { return; }
      var at = pair.indexOf("=");
      var key = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
      var value = at < 0 ? "" : decodeURIComponent(pair.slice(at + 1).replace(/\+/g, " "));
      if (key in found) { found[key] = value; }
    });
    return found;
  }

  function hashOf(s) {
    var parts = [];
    KEYS.forEach(function (key) {
      var value = key === "dir" ? (s.sort && s.dir < 0 ? "-1" : "") : s[key];
      if (value) { parts.push(key + "=" + encodeURIComponent(value)); }
    });
    return "#items" + (parts.length ? "?" + parts.join("&") : "");
  }

  function update(patch) {
    Object.keys(patch).forEach(function (key) { state[key] = patch[key]; });
    written = hashOf(state);
    if (location.hash !== written) { location.replace(written); }
    render();
    if (patch.item) { els.detail.scrollIntoView(); }
  }

  function fromHash(scroll) {
    var found = parseHash(location.hash);
    if (!found) { return; }
    if (found.judge && data.judges.indexOf(found.judge) < 0) { found.judge = ""; }
    if (data.filters.indexOf(found.filter) < 0) { found.filter = ""; }
    state.judge = found.judge; state.filter = found.filter;
    state.q = found.q; state.item = found.item; state.page = 0;
    state.sort = validSort(found.sort) ? found.sort : "";
    state.dir = found.dir === "-1" ? -1 : 1;
    render();
    if (scroll) { (state.item ? els.detail : root).scrollIntoView(); }
  }

  // --- fixed order columns -----------------------------------------------------------------
  function isRetest(order) { return order.indexOf("(retest)") >= 0 ? 1 : 0; }

  function byOrder(a, b) {
    return (isRetest(a) - isRetest(b)) || (a < b ? -1 : a > b ? 1 : 0);
  }

  function orderLabel(order) { return order.replace(/_first\b/, " first"); }

  function collectOrders() {
    var seen = {};
    data.items.forEach(function (item) {
      (item.v || []).forEach(function (list) { list.forEach(function (v) { seen[v[0]] = 1; }); });
    });
    orders = Object.keys(seen).sort(byOrder);
    if (orders.length > 4) { orders = []; }  // too many (criteria, repeats): one cell per judge
  }

  function inOrder(list) {
    return list.slice().sort(function (a, b) { return byOrder(a[0], b[0]); });
  }

  function validSort(key) {
    if (["id", "question", "gold", "status"].indexOf(key) >= 0) { return true; }
    var parts = key.split(":");
    return parts[0] === "judge" && +parts[1] >= 0 && +parts[1] < data.judges.length;
  }

  // --- filtering and sorting ---------------------------------------------------------------
  function judgeIndex() { return state.judge ? data.judges.indexOf(state.judge) : -1; }

  function has(item, filter, j) {
    if (filter === "disagree") { return item.d === 1; }
    var bit = data.bits[filter];
    if (j >= 0) { return (item.f[j] & bit) !== 0; }
    for (var k = 0; k < item.f.length; k++) { if (item.f[k] & bit) { return true; } }
    return false;
  }

  function haystack(i) {
    if (!haystacks) { haystacks = new Array(data.items.length); }
    if (haystacks[i] === undefined && data.paged) {
      var row = data.items[i];
      haystacks[i] = [row.id, row.q, row.g || ""].concat(row.s).join("\n").toLowerCase();
    }
    if (haystacks[i] === undefined) {
      var item = data.items[i];
      var parts = [item.id, item.q, item.g || ""];
      item.r.forEach(function (r) { parts.push(r[1]); });
      item.v.forEach(function (list) {
        list.forEach(function (v) { parts.push(v[1], v[3]); });
      });
      haystacks[i] = parts.join("\n").toLowerCase();
    }
    return haystacks[i];
  }

  function verdicts(item, j, k) {
    if (item.s) { return item.s[j]; }
    var list = inOrder(item.v[j]);
    if (k !== undefined) {
      var found = list.filter(function (v) { return v[0] === orders[k]; });
      return found.length ? found[0][1] : "";
    }
    return list.map(function (v) { return v[1]; }).join(" / ");
  }

  function failures(item) {
    if (item.n !== undefined) { return item.n; }
    var n = 0;
    item.v.forEach(function (list) {
      list.forEach(function (v) { if (v[4] !== "ok") { n++; } });
    });
    return n;
  }

  function sortKey(item) {
    if (state.sort === "question") { return item.q.toLowerCase(); }
    if (state.sort === "gold") { return item.g || ""; }
    if (state.sort === "status") { return failures(item); }
    if (state.sort.indexOf("judge:") === 0) {
      var parts = state.sort.split(":");
      return verdicts(item, +parts[1], parts.length > 2 ? +parts[2] : undefined);
    }
    return null;
  }

  function matching() {
    var j = judgeIndex();
    var needle = state.q.toLowerCase();
    var found = [];
    for (var i = 0; i < data.items.length; i++) {
      var item = data.items[i];
      if (state.filter && !has(item, state.filter, j)) { continue; }
      if (needle && haystack(i).indexOf(needle) < 0) { continue; }
      found.push(item);
    }
    if (state.sort) {
      var keyed = found.map(function (item, k) { return [sortKey(item), k, item]; });
      keyed.sort(function (a, b) {
        if (a[0] < b[0]) { return -state.dir; }
        if (a[0] > b[0]) { return state.dir; }
        return a[1] - b[1];
      });
      found = keyed.map(function (k) { return k[2]; });
      if (state.sort === "id" && state.dir < 0) { found.reverse(); }
    }
    return found;
  }

  // --- drawing -----------------------------------------------------------------------------
  function shownJudges() {
    var j = judgeIndex();
    if (j >= 0) { return [j]; }
    return data.judges.map(function (_, k) { return k; }).slice(0, 8);
  }

  function columns(j) {  // the list's columns of judge j: one per fixed order, else one
    if (data.paged || !orders.length) { return [undefined]; }
    return orders.map(function (_, k) { return k; });
  }

  function header(label, key, sub) {
    var th = el("th");
    th.scope = "col";
    var button = el("button", label, "jb-sort");
    if (sub) { button.appendChild(el("span", sub, "jb-order")); }
    button.type = "button";
    button.setAttribute("data-sort", key);
    if (state.sort === key) { button.textContent += state.dir > 0 ? " ▲" : " ▼"; }
    th.appendChild(button);
    return th;
  }

  function drawHead() {
    var row = el("tr");
    row.appendChild(header("Item", "id"));
    row.appendChild(header("Question", "question"));
    row.appendChild(header(data.label === "human" ? "Human label" : "Gold", "gold"));
    shownJudges().forEach(function (j) {
      columns(j).forEach(function (k) {
        if (k === undefined) { row.appendChild(header(data.judges[j], "judge:" + j)); return; }
        row.appendChild(header(data.judges[j], "judge:" + j + ":" + k, orderLabel(orders[k])));
      });
    });
    row.appendChild(header("Status", "status"));
    els.head.replaceChildren(row);
  }

  function marks(item, j) {
    var text = "";
    if (item.f[j] & data.bits.flipped) { text += " ⇄"; }
    if (item.f[j] & data.bits.wrong) { text += " ✗"; }
    if (item.f[j] & data.bits.failed) { text += " !"; }
    return text;
  }

  function drawRow(item) {
    var tr = el("tr");
    tr.setAttribute("data-item", item.id);
    var idCell = el("td", null, "nw");
    var link = el("a", item.id);
    link.href = hashOf({judge: state.judge, filter: state.filter, q: state.q, sort: state.sort,
                        dir: state.dir, item: item.id});
    idCell.appendChild(link);
    tr.appendChild(idCell);
    var q = item.q.length > 160 ? item.q.slice(0, 160) + "…" : item.q;
    tr.appendChild(el("td", q, "jb-q"));
    tr.appendChild(el("td", item.g || "—", "nw"));
    shownJudges().forEach(function (j) {
      columns(j).forEach(function (k) {
        tr.appendChild(el("td", (verdicts(item, j, k) || "—") + marks(item, j), "nw"));
      });
    });
    var failed = failures(item);
    tr.appendChild(el("td", failed ? failed + " failed" : "ok", failed ? "status-fail nw" : "nw"));
    return tr;
  }

  function drawCounts() {
    var j = judgeIndex();
    els.filters.forEach(function (button) {
      var name = button.getAttribute("data-filter");
      var n = 0;
      data.items.forEach(function (item) { if (has(item, name, j)) { n++; } });
      button.setAttribute("aria-pressed", String(state.filter === name));
      var count = button.querySelector("[data-filter-count]");
      if (count) { count.textContent = String(n); }
    });
  }

  // --- paged: an item's full row from its side file ---------------------------------------
  function pageFile(page) {
    return data.paged.dir + "/page-" + String(page).padStart(4, "0") + ".js";
  }

  function fullRow(i) {
    if (!data.paged) { return data.items[i]; }
    var page = Math.floor(i / data.paged.size) + 1;
    var rows = pages[page];
    if (rows === undefined) { requestPage(page); rows = pages[page]; }
    if (typeof rows === "string") { return rows; }
    return rows[i - (page - 1) * data.paged.size];
  }

  function requestPage(page) {
    pages[page] = "Reading " + pageFile(page) + "…";
    var script = document.createElement("script");
    script.src = pageFile(page);
    script.onerror = function () {
      pages[page] = "Could not read " + pageFile(page) + ": keep the folder " + data.paged.dir +
        " beside report.html.";
      drawDetail();
    };
    document.head.appendChild(script);
  }

  // Called by each side file with its page number and its rows (gzip+base64 JSON).
  window.jbItemsPage = function (page, packed) {
    unpack(packed).then(function (rows) {
      var first = (page - 1) * data.paged.size;
      var expected = Math.min(data.paged.size, data.items.length - first);
      var same = rows.length === expected && rows.every(function (row, k) {
        return row.id === data.items[first + k].id;
      });
      pages[page] = same ? rows : pageFile(page) + " is not this report's (its items differ): " +
        "write the report again.";
      drawDetail();
    }, function (error) {
      pages[page] = "Could not read " + pageFile(page) + ": " + error;
      drawDetail();
    });
  };

  function drawDetail() {
    var at = -1;
    for (var i = 0; i < data.items.length && state.item; i++) {
      if (data.items[i].id === state.item) { at = i; break; }
    }
    var item = at >= 0 ? fullRow(at) : null;
    els.detail.hidden = !item;
    els.detail.setAttribute("data-detail-item", item ? data.items[at].id : "");
    if (!item) { els.detail.replaceChildren(); return; }
    var parts = [el("h3", "Item " + data.items[at].id)];
    var close = el("button", "Close", "jb-close");
    close.type = "button";
    close.setAttribute("data-close", "");
    parts.push(close, neighbours(data.items[at].id));
    if (typeof item === "string") {
      els.detail.setAttribute("data-detail-state", "waiting");
      parts.push(el("p", item, "jb-loading"));
      els.detail.replaceChildren.apply(els.detail, parts);
      return;
    }
    els.detail.setAttribute("data-detail-state", "shown");
    parts.push(el("h4", "Question"), el("pre", item.q || "(no question text: run analyze with --dataset)", "raw"));
    item.r.forEach(function (r) {
      var box = el("div", null, "jb-response");
      box.setAttribute("data-response", r[0]);
      box.appendChild(el("h4", "Response " + r[0]));
      box.appendChild(el("pre", r[1], "raw"));
      parts.push(box);
    });
    parts.push(el("p", (data.label === "human" ? "Human label: " : "Gold: ") + (item.g || "—")));
    var table = el("table", null, "jb-judgments");
    var head = el("tr");
    ["Judge", "Order", "Verdict", "Confidence", "Status", "Parse", "Tokens", "Latency", "Cost",
     "Reasoning, raw answer, prompt sent"].forEach(function (t) { head.appendChild(el("th", t)); });
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    data.judges.forEach(function (judge, j) {
      inOrder(item.v[j]).forEach(function (v) { body.appendChild(judgmentRow(judge, v)); });
    });
    var wrap = el("div", null, "table-wrap");
    wrap.appendChild(table);
    parts.push(wrap);
    els.detail.replaceChildren.apply(els.detail, parts);
  }

  function judgmentRow(judge, v) {
    var tr = el("tr");
    tr.setAttribute("data-judgment", judge);
    tr.setAttribute("data-order", v[0]);
    [judge, orderLabel(v[0]), v[1], v[2], v[4], v[5], v[6], v[7], v[8]].forEach(function (t) {
      tr.appendChild(el("td", t || "—", "nw"));
    });
    var reason = el("td");
    reason.appendChild(el("pre", v[3] || "—", "raw jb-reason"));
    if (v[9]) { reason.appendChild(folded("Raw answer", v[9], "data-raw")); }
    if (v[10]) { reason.appendChild(folded("Prompt as sent", v[10], "data-prompt")); }
    tr.appendChild(reason);
    return tr;
  }

  function folded(title, text, attribute) {
    var box = el("details");
    box.setAttribute(attribute, "");
    box.appendChild(el("summary", title));
    box.appendChild(el("pre", text, "raw"));
    return box;
  }

  function neighbours(id) {  // previous / next item of the current filtered, sorted list
    var rows = matching();
    var at = -1;
    for (var i = 0; i < rows.length; i++) { if (rows[i].id === id) { at = i; break; } }
    var nav = el("p", at >= 0 ? "Item " + (at + 1) + " of " + rows.length + " " : "", "jb-nav");
    [["prev", "← Previous item", at - 1], ["next", "Next item →", at + 1]].forEach(function (b) {
      var button = el("button", b[1], "jb-close");
      button.type = "button";
      button.setAttribute("data-item-nav", b[0]);
      var target = at >= 0 && b[2] >= 0 && b[2] < rows.length ? rows[b[2]].id : "";
      button.disabled = !target;
      button.setAttribute("data-target", target);
      nav.appendChild(button);
    });
    return nav;
  }

  function render() {
    var rows = matching();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    var start = state.page * PAGE;
    var shown = rows.slice(start, start + PAGE);
    els.judge.value = state.judge;
    if (els.search.value !== state.q) { els.search.value = state.q; }
    drawHead();
    drawCounts();
    var fragment = document.createDocumentFragment();
    shown.forEach(function (item) { fragment.appendChild(drawRow(item)); });
    els.body.replaceChildren(fragment);
    var what = [state.judge || "all judges", state.filter || "no filter"];
    if (state.q) { what.push("search “" + state.q + "”"); }
    els.status.textContent = rows.length
      ? "Items " + (start + 1) + "–" + (start + shown.length) + " of " + rows.length +
        " (" + what.join(", ") + "; " + data.items.length + " items in all" +
        (data.paged ? ", their texts in " + data.paged.pages + " files in " + data.paged.dir : "") +
        ")"
      : "No item matches (" + what.join(", ") + ").";
    els.status.setAttribute("data-matching", String(rows.length));
    els.prev.disabled = state.page === 0;
    els.next.disabled = state.page >= pages - 1;
    drawDetail();
  }

  // --- wiring ------------------------------------------------------------------------------
  function wire() {
    els.judge.addEventListener("change", function () { update({judge: els.judge.value, page: 0}); });
    els.search.addEventListener("input", function () { update({q: els.search.value, page: 0}); });
    els.filters.forEach(function (button) {
      button.addEventListener("click", function () {
        var name = button.getAttribute("data-filter");
        update({filter: state.filter === name ? "" : name, page: 0});
      });
    });
    els.head.addEventListener("click", function (event) {
      var button = event.target.closest("[data-sort]");
      if (!button) { return; }
      var key = button.getAttribute("data-sort");
      update({dir: state.sort === key ? -state.dir : 1, sort: key});
    });
    els.body.addEventListener("click", function (event) {
      var row = event.target.closest("[data-item]");
      if (!row || event.target.closest("a")) { return; }
      update({item: row.getAttribute("data-item")});
    });
    els.detail.addEventListener("click", function (event) {
      if (event.target.closest("[data-close]")) { update({item: ""}); }
      var nav = event.target.closest("[data-item-nav]");
      if (nav && nav.getAttribute("data-target")) { update({item: nav.getAttribute("data-target")}); }
    });
    els.prev.addEventListener("click", function () { update({page: state.page - 1}); });
    els.next.addEventListener("click", function () { update({page: state.page + 1}); });
    window.addEventListener("hashchange", function () {
      if (location.hash !== written) { fromHash(true); }
    });
  }

  decode().then(function (loaded) {
    data = loaded;
    if (!data || !data.items) { root.setAttribute("data-ready", "empty"); return; }
    collectOrders();
    wire();
    render();
    fromHash(location.hash.indexOf("#items") === 0);
    root.setAttribute("data-ready", "1");
  }, function (error) {
    els.status.textContent = "The item data could not be read: " + error;
    root.setAttribute("data-ready", "error");
  });
})();
