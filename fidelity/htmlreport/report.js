// Filter and sort the tables of a fidelity report, in the page: no server, no library.
(function () {
  "use strict";
  function setUp(table) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var rows = Array.prototype.slice.call(body.rows);
    var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
    var box = document.getElementById(table.id + "-filter");
    var pick = document.getElementById(table.id + "-class");
    var shown = document.getElementById(table.id + "-shown");
    function apply() {
      var want = box ? box.value.toLowerCase() : "";
      var cls = pick ? pick.value : "";
      var n = 0;
      rows.forEach(function (r, i) {
        var ok = (!cls || r.getAttribute("data-class") === cls) &&
          (!want || texts[i].indexOf(want) !== -1);
        r.hidden = !ok;
        if (ok) { n += 1; }
      });
      if (shown) { shown.textContent = n + " of " + rows.length + " shown"; }
    }
    function key(row, i, numeric) {
      var cell = row.cells[i];
      var raw = cell ? (cell.getAttribute("data-sort") || cell.textContent) : "";
      if (!numeric) { return raw.toLowerCase(); }
      var x = parseFloat(raw);
      return isNaN(x) ? -Infinity : x;
    }
    table.tHead.addEventListener("click", function (event) {
      var th = event.target.closest("th[data-type]");
      if (!th) { return; }
      var i = th.cellIndex;
      var numeric = th.getAttribute("data-type") === "num";
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) {
        c.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var order = rows.map(function (r, n) { return [key(r, i, numeric), n]; });
      order.sort(function (a, b) {
        var d = a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1];
        return up ? d : -d;
      });
      var frag = document.createDocumentFragment();
      order.forEach(function (o) { frag.appendChild(rows[o[1]]); });
      body.appendChild(frag);
    });
    if (box) { box.addEventListener("input", apply); }
    if (pick) { pick.addEventListener("change", apply); }
    apply();
  }
  Array.prototype.forEach.call(document.querySelectorAll("table[data-table]"), setUp);
  document.documentElement.setAttribute("data-ready", "1");
})();
