"use strict";
// Filters of the items matrices (one per profile): an item row shows when it matches every filter; a
// section or spec heading, and a profile's matrix, shows when one of its items does. The page's
// Content-Security-Policy allows this script alone.
(function () {
  var profile = document.getElementById("f-profile");
  var level = document.getElementById("f-level");
  var verdict = document.getElementById("f-verdict");
  var text = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  var items = Array.prototype.slice.call(document.querySelectorAll("tr.item"));

  function matches(row) {
    if (profile.value && row.dataset.profile !== profile.value) return false;
    if (level.value && row.dataset.level !== level.value) return false;
    if (verdict.value && !row.querySelector('td.cell[data-verdict="' + CSS.escape(verdict.value) + '"]')) return false;
    var words = text.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    return words.every(function (word) { return row.dataset.search.indexOf(word) !== -1; });
  }

  function apply() {
    var shown = 0;
    items.forEach(function (row) {
      row.hidden = !matches(row);
      if (!row.hidden) shown += 1;
    });
    document.querySelectorAll("tr.section").forEach(function (heading) {
      var next = heading.nextElementSibling, any = false;
      while (next && next.classList.contains("item")) {
        any = any || !next.hidden;
        next = next.nextElementSibling;
      }
      heading.hidden = !any;
    });
    document.querySelectorAll("tbody.spec").forEach(function (body) {
      body.hidden = !body.querySelector("tr.item:not([hidden])");
    });
    document.querySelectorAll("section.profile").forEach(function (group) {
      group.hidden = !group.querySelector("tr.item:not([hidden])");
    });
    count.textContent = shown + " of " + items.length + " items shown";
  }

  [profile, level, verdict].forEach(function (control) { control.addEventListener("change", apply); });
  text.addEventListener("input", apply);
  apply();
})();
