// jurybox label: the blind labelling page. Every text from the run is inserted as text
// (textContent), never as markup; the server's Content-Security-Policy allows this script only.
"use strict";
(function () {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  const view = { position: null, item: null, answer: null, firstPending: null, total: 0, cursor: 0 };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "dataset") Object.assign(node.dataset, value);
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  async function api(path, body) {
    const init = { headers: { "X-Jurybox-Token": token }, cache: "no-store" };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const reply = await fetch(path, init);
    const data = await reply.json().catch(() => ({ error: `HTTP ${reply.status}` }));
    if (!reply.ok) throw new Error(data.error || `HTTP ${reply.status}`);
    return data;
  }

  function say(text, error) {
    const status = $("status");
    status.textContent = text;
    status.className = error ? "error" : "";
  }

  function showProgress(state) {
    view.firstPending = state.next;
    view.total = state.total;
    const done = state.labelled + state.skipped;
    $("progress").textContent =
      `${done} of ${state.total} done (${state.labelled} labelled, ${state.skipped} skipped)`;
    $("progress").dataset.done = String(done);
  }

  async function start() {
    try {
      const state = await api("/api/state");
      showProgress(state);
      $("annotator").textContent = state.annotator;
      if (state.next === null) finish();
      else await show(state.next);
    } catch (error) {
      say(`Could not load: ${error.message}`, true);
    }
  }

  function finish() {
    $("item").hidden = true;
    $("done").hidden = false;
    document.body.dataset.state = "done";
  }

  async function show(position) {
    const item = await api(`/api/item/${position}`);
    view.position = position;
    view.item = item;
    view.answer = item.answer ? JSON.parse(JSON.stringify(item.answer)) : null;
    view.cursor = 0;
    $("done").hidden = true;
    $("item").hidden = false;
    $("where").textContent = `Item ${position} of ${item.total}` + (item.skipped ? " (skipped)" : "");
    $("question-text").textContent = item.question;
    const responses = $("responses");
    responses.replaceChildren(
      ...item.responses.map((r) =>
        el("section", {}, el("h2", { text: r.name }), el("div", { class: "text", text: r.text })),
      ),
    );
    $("notes").value = item.notes || "";
    renderForm(item.form);
    $("back").disabled = position <= 1;
    say(item.answer ? "Labelled before: change it or move on." : "");
    $("item").dataset.position = String(position);
    document.body.dataset.state = "item";
    window.scrollTo(0, 0);
  }

  // --- forms -------------------------------------------------------------------------------
  function renderForm(form) {
    const box = $("form");
    box.replaceChildren();
    if (form.kind === "prefer") renderPrefer(box, form);
    else if (form.kind === "scores") renderScores(box, form);
    else renderVerdicts(box, form);
  }

  function renderPrefer(box, form) {
    const chosen = view.answer ? view.answer.prefer : null;
    form.responses.forEach((name, index) => {
      const button = el("button", { type: "button", class: "choice" }, `${name} is better `,
        el("kbd", { text: String(index + 1) }));
      button.setAttribute("aria-pressed", String(chosen === index + 1));
      button.addEventListener("click", () => submit({ prefer: index + 1 }));
      box.append(button);
    });
    const tie = el("button", { type: "button", class: "choice" }, "Tie ", el("kbd", { text: "t" }));
    tie.setAttribute("aria-pressed", String(chosen === 0));
    tie.addEventListener("click", () => submit({ prefer: 0 }));
    box.append(tie);
  }

  function renderScores(box, form) {
    const given = view.answer ? view.answer.scores : null;
    form.responses.forEach((name, r) => {
      const set = el("fieldset", {}, el("legend", { text: name }));
      for (const dim of form.dimensions) {
        const input = el("input", {
          type: "number", min: String(dim.min), max: String(dim.max), step: "1",
          dataset: { response: String(r), dimension: dim.key },
        });
        if (given && given[r] && given[r][dim.key] !== undefined) input.value = given[r][dim.key];
        const label = el("label", { class: "dimension" }, `${dim.title} (${dim.min}-${dim.max}) `, input);
        if (dim.description) label.append(el("small", { text: dim.description }));
        for (const [band, text] of dim.anchors) label.append(el("small", { text: `${band}: ${text}` }));
        set.append(label);
      }
      box.append(set);
    });
    const first = box.querySelector("input");
    if (first) first.focus();
  }

  function renderVerdicts(box, form) {
    if (form.criterion) {
      const c = form.criterion;
      box.append(el("div", { class: "criterion" }, el("strong", { text: c.name }),
        el("small", { text: c.definition }), el("small", { text: `Pass: ${c.pass}` }),
        el("small", { text: `Fail: ${c.fail}` })));
    }
    const given = view.answer ? view.answer.verdicts : null;
    form.responses.forEach((name, r) => {
      const set = el("fieldset", { dataset: { response: String(r) } }, el("legend", { text: name }));
      for (const [verdict, key] of [["Pass", "p"], ["Fail", "f"]]) {
        const button = el("button", { type: "button", class: "choice" }, `${verdict} `, el("kbd", { text: key }));
        button.setAttribute("aria-pressed", String(!!given && given[r] === verdict));
        button.addEventListener("click", () => setVerdict(r, verdict));
        set.append(button);
      }
      box.append(set);
    });
  }

  function setVerdict(index, verdict) {
    const count = view.item.form.responses.length;
    const verdicts = (view.answer && view.answer.verdicts) || new Array(count).fill(null);
    verdicts[index] = verdict;
    view.answer = { verdicts };
    $("form").querySelectorAll("fieldset").forEach((set, r) => {
      set.querySelectorAll("button").forEach((b) =>
        b.setAttribute("aria-pressed", String(verdicts[r] !== null && b.textContent.startsWith(verdicts[r]))));
    });
    if (verdicts.every((v) => v !== null)) submit(view.answer);
  }

  function nextVerdict(verdict) {
    // Keys fill the responses in order from the first, whatever was given before.
    const count = view.item.form.responses.length;
    if (view.cursor === 0) view.answer = { verdicts: new Array(count).fill(null) };
    const index = Math.min(view.cursor, count - 1);
    view.cursor += 1;
    setVerdict(index, verdict);
  }

  function scoresAnswer() {
    const form = view.item.form;
    const scores = form.responses.map(() => ({}));
    for (const input of $("form").querySelectorAll("input")) {
      if (input.value === "") return null;
      scores[Number(input.dataset.response)][input.dataset.dimension] = Number(input.value);
    }
    return { scores };
  }

  // --- actions ------------------------------------------------------------------------------
  async function submit(answer) {
    try {
      const state = await api("/api/label", {
        position: view.position, answer, notes: $("notes").value,
      });
      showProgress(state);
      await advance(state);
    } catch (error) {
      say(`Not saved: ${error.message}`, true);
    }
  }

  async function skip() {
    try {
      const state = await api("/api/skip", { position: view.position });
      showProgress(state);
      await advance(state);
    } catch (error) {
      say(`Not saved: ${error.message}`, true);
    }
  }

  async function advance(state) {
    // Reviewing earlier items (after "back"): step forward; otherwise the next open item.
    if (state.next !== null && view.position + 1 < state.next) return show(view.position + 1);
    if (state.next === null) return finish();
    return show(state.next);
  }

  async function back() {
    const target = view.position === null || $("item").hidden ? view.total : view.position - 1;
    if (target >= 1) await show(target);
  }

  async function summary() {
    const box = $("summary");
    box.hidden = false;
    box.replaceChildren(el("p", { text: "Computing…" }));
    try {
      renderSummary(box, await api("/api/summary"));
    } catch (error) {
      box.replaceChildren(el("p", { class: "error", text: `Could not compute: ${error.message}` }));
    }
  }

  function interval(m) {
    if (!m || m.value === null || m.value === undefined) return m && m.reason ? `— (${m.reason})` : "—";
    const ci = m.ci_low !== undefined && m.ci_low !== null ? ` [${m.ci_low.toFixed(2)}, ${m.ci_high.toFixed(2)}]` : "";
    return `${m.value.toFixed(3)}${ci}`;
  }

  function renderSummary(box, data) {
    const rows = (cells) => el("tr", {}, ...cells.map((c) => el("td", { text: c })));
    const head = (cells) => el("tr", {}, ...cells.map((c) => el("th", { text: c })));
    box.replaceChildren(el("h2", { text: "Agreement among annotators" }));
    const agreement = data.agreement;
    if (agreement.status !== "computed") {
      box.append(el("p", { text: agreement.reason || "not computed" }));
    } else {
      const table = el("table", { dataset: { agreement: "" } },
        head(["Annotators", "Cohen's κ [95% CI]", "Agreement", "Items"]));
      for (const pair of agreement.pairs || []) {
        table.append(rows([pair.raters.join(" – "), interval(pair.cohen_kappa),
          interval(pair.percent_agreement), String(pair.cohen_kappa.n)]));
      }
      box.append(table, el("p", { text: `Krippendorff's α: ${interval(agreement.krippendorff_alpha)}` +
        `; bootstrap interval ${interval(agreement.krippendorff_alpha_ci)}` }));
    }
    box.append(el("h2", { text: "Each judge's verdict, before this session and now" }),
      el("p", { class: "warning", text: "Stopping when a verdict turns is optional stopping: " +
        "decide how many labels to give before you look." }));
    const verdicts = el("table", { dataset: { verdicts: "" } },
      head(["Judge", "Before", "Accuracy before", "Now", "Accuracy now"]));
    for (const v of data.verdicts) {
      verdicts.append(rows([v.judge, v.before ? v.before.level : "—",
        v.before ? interval(v.before.accuracy) : "—", v.after.level, interval(v.after.accuracy)]));
    }
    box.append(verdicts, el("p", { class: "help",
      text: `${data.labels.before} labelled items before, ${data.labels.after} now (${data.labels_file}).` }));
    box.dataset.ready = "1";
  }

  // --- keyboard -----------------------------------------------------------------------------
  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && target.id === "notes") {
      if (event.key === "Escape") target.blur();
      return;
    }
    if ($("item").hidden) {
      if (event.key === "b" || event.key === "ArrowLeft") { event.preventDefault(); back(); }
      return;
    }
    const kind = view.item ? view.item.form.kind : null;
    const key = event.key;
    if (key === "Enter" && kind === "scores" && target && target.tagName === "INPUT") {
      event.preventDefault();
      const inputs = Array.from($("form").querySelectorAll("input"));
      const open = inputs.find((i, n) => n > inputs.indexOf(target) && i.value === "");
      if (open) open.focus();
      else {
        const answer = scoresAnswer();
        if (answer) submit(answer);
        else say("Give every score first.", true);
      }
      return;
    }
    if (target && target.tagName === "INPUT" && /^[0-9]$/.test(key)) return;
    if (kind === "prefer" && /^[0-9]$/.test(key)) {
      const choice = Number(key);
      if (choice <= view.item.form.responses.length) { event.preventDefault(); submit({ prefer: choice }); }
    } else if (kind === "prefer" && key === "t") { event.preventDefault(); submit({ prefer: 0 }); }
    else if (kind === "verdict" && (key === "p" || key === "f")) {
      event.preventDefault();
      nextVerdict(key === "p" ? "Pass" : "Fail");
    } else if (key === "s") { event.preventDefault(); skip(); }
    else if (key === "b" || key === "ArrowLeft") { event.preventDefault(); back(); }
    else if (key === "ArrowRight" && view.position < view.total) { event.preventDefault(); show(view.position + 1); }
    else if (key === "n") { event.preventDefault(); $("notes").focus(); }
    else if (key === "?") { event.preventDefault(); $("help").hidden = !$("help").hidden; }
  }

  document.addEventListener("keydown", onKey);
  $("back").addEventListener("click", back);
  $("skip").addEventListener("click", skip);
  $("save").addEventListener("click", () => {
    const kind = view.item && view.item.form.kind;
    const answer = kind === "scores" ? scoresAnswer() : view.answer;
    if (answer) submit(answer);
    else say("Choose a label first.", true);
  });
  $("summary-button").addEventListener("click", summary);
  start();
})();
