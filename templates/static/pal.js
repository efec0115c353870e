/* Table sorting and filtering for pal pages. Plain ES5-ish vanilla JS, no dependencies.
   Pages stay fully readable without it (Jenkins' CSP blocks all scripts). */
(function () {
  "use strict";
  document.documentElement.setAttribute("data-pal-js", "1");

  function cellValue(td) {
    var key = td.getAttribute("data-sort"); /* e.g. a change signed by the metric's direction */
    if (key !== null) { return key === "" ? "" : parseFloat(key); }
    var text = td.textContent.trim();
    var n = parseFloat(text);
    return (text !== "" && !isNaN(n) && /^[-+]?[0-9.]+$/.test(text)) ? n : text.toLowerCase();
  }

  function sortTable(table, col, th) {
    var tbody = table.tBodies[0];
    var asc = !th.classList.contains("asc");
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(asc ? "asc" : "desc");
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col]), y = cellValue(b.cells[col]);
      var xe = x === "", ye = y === "";
      if (xe !== ye) { return xe ? 1 : -1; } /* empty (unknown) last either way */
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () { sortTable(table, i, th); });
    });
  });

  /* copy buttons: the <pre> they name, to the clipboard (a selection and execCommand where the
     Clipboard API is missing, e.g. pages opened from disk) */
  function copyText(pre, button) {
    var text = pre.textContent;
    function done() { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 1500); }
    function fallback() {
      var range = document.createRange();
      range.selectNodeContents(pre);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      try { if (document.execCommand("copy")) { done(); } } catch (e) { /* the text stays selected */ }
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, fallback);
    } else {
      fallback();
    }
  }
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    var pre = document.getElementById(button.getAttribute("data-copy"));
    if (!pre) { return; }
    button.hidden = false;
    button.addEventListener("click", function () { copyText(pre, button); });
  });

  var form = document.getElementById("filter");
  if (!form) { return; }
  form.hidden = false;
  /* sticky headers and anchored titles keep clear of the sticky bar: its height in --bar */
  function measure() {
    document.documentElement.style.setProperty("--bar", form.offsetHeight + "px");
  }
  measure();
  window.addEventListener("resize", measure);
  function apply() {
    var q = form.elements.q.value.trim().toLowerCase();
    var nic = form.elements.nic.value, fs = form.elements.fs.value, cores = form.elements.cores.value;
    var shown = 0, total = 0;
    document.querySelectorAll("table.dash").forEach(function (table) {
      var visible = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
        var ok = (!q || tr.cells[0].textContent.toLowerCase().indexOf(q) >= 0) &&
          (!nic || tr.getAttribute("data-nic") === nic) &&
          (!fs || tr.getAttribute("data-fs") === fs) &&
          (!cores || tr.getAttribute("data-cores") === cores);
        tr.hidden = !ok;
        total += 1;
        if (ok) { visible += 1; }
      });
      shown += visible;
      table.hidden = visible === 0;
      var h = table.previousElementSibling;
      if (h && h.tagName === "H3") { h.hidden = visible === 0; }
    });
    document.getElementById("shown").textContent = shown + " of " + total + " series shown";
  }
  form.addEventListener("input", apply);
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  apply();
}());
