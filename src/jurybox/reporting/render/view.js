/* jurybox view: sort a table by a column (click its header; again to reverse). Runs under a
   CSP that allows only this script (by hash): no network, no eval. */
(function () {
  "use strict";
  function key(cell) {
    var given = cell.getAttribute("data-sort");
    return given === null ? cell.textContent.trim() : given;
  }
  function compare(a, b) {
    var x = a === "" ? NaN : Number(a), y = b === "" ? NaN : Number(b);
    if (!isNaN(x) && !isNaN(y)) { return x - y; }
    if (!isNaN(x)) { return -1; }
    if (!isNaN(y)) { return 1; }
    return a.localeCompare(b);
  }
  function sortBy(table, heads, index) {
    var head = heads[index];
    var ascending = head.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(heads, function (other) { other.removeAttribute("aria-sort"); });
    head.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r, s) {
      var order = compare(key(r.cells[index]), key(s.cells[index]));
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (head, index) {
      var button = head.querySelector("button");
      if (button) {
        button.addEventListener("click", function () { sortBy(table, heads, index); });
      }
    });
  });
})();
