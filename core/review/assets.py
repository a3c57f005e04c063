"""The review page's inline style and script (kept apart from the drawing code for reading).

The script only switches documents, filters the list and links table rows to highlights; the
page is complete without it (the first document shows, the others stay hidden)."""

PAGE_STYLE = """
:root{--ink:#1d2430;--muted:#5f6b7a;--line:#dfe3ea;--panel:#fff;--back:#f4f6f9;--accent:#2f5fd0;--low:#c62828;
--c4:#bfe8b8;--c3:#dcefa8;--c2:#ffe38f;--c1:#ffc98f;--c0:#ffaaa6;--cn:#d3e1f5}
*{box-sizing:border-box}
body{margin:0;height:100vh;display:flex;flex-direction:column;overflow:hidden;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--back)}
header.top{flex:none;display:flex;flex-wrap:wrap;align-items:center;gap:6px 18px;padding:10px 18px;background:#1f2a3c;color:#fff}
header.top h1{font-size:17px;margin:0;font-weight:600}
header.top .summary{margin:0;color:#c9d3e3}
.legend{display:flex;flex-wrap:wrap;align-items:center;gap:5px;color:#c9d3e3;font-size:12px}
.chip{display:inline-block;padding:1px 7px;border-radius:9px;color:var(--ink);font-size:12px;white-space:nowrap;
font-variant-numeric:tabular-nums}
.c4{background:var(--c4)}.c3{background:var(--c3)}.c2{background:var(--c2)}.c1{background:var(--c1)}
.c0{background:var(--c0)}.cn{background:var(--cn)}
.chip.lowmark{background:#fff3f2;color:var(--low);text-decoration:underline wavy var(--low);text-underline-offset:3px}
.toggle{font-size:12px;color:inherit;user-select:none;white-space:nowrap}
.layout{flex:1;min-height:0;display:flex}
nav.docs{flex:0 0 250px;position:relative;overflow:auto;padding:10px;border-right:1px solid var(--line);
background:var(--panel)}
body.single nav.docs{display:none}
nav.docs input[type=search]{width:100%;padding:5px 7px;border:1px solid var(--line);border-radius:5px;font:inherit}
nav.docs .toggle{display:block;margin:6px 2px;color:var(--muted)}
#doclist{list-style:none;margin:6px 0 0;padding:0;counter-reset:doc}
#doclist a{display:flex;gap:5px;align-items:center;padding:4px 6px;border-radius:5px;color:var(--ink);text-decoration:none}
#doclist a:hover{background:#eef2f8}
#doclist a.current{background:var(--accent);color:#fff}
#doclist .name{flex:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
main{flex:1;min-width:0;overflow:auto;padding:14px 18px}
section.doc h2{font-size:16px;margin:0 0 2px;overflow-wrap:anywhere}
.stats{margin:0 0 10px;color:var(--muted);font-size:12px}
.error{padding:8px 10px;border-left:4px solid var(--low);background:#fdecec;margin:0 0 10px}
.panes{display:grid;grid-template-columns:minmax(0,1.15fr) minmax(0,1fr);gap:14px;align-items:start}
@media (max-width:900px){.panes{grid-template-columns:minmax(0,1fr)}}
.text,.fields{background:var(--panel);border:1px solid var(--line);border-radius:8px;max-height:calc(100vh - 150px);overflow:auto}
.text{padding:12px 14px;white-space:pre-wrap;overflow-wrap:anywhere;
font:13.5px/1.9 ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace}
mark.seg{color:inherit;border-radius:2px;padding:1px 0;cursor:pointer}
mark.seg.nested{box-shadow:inset 0 -2px 0 rgba(29,36,48,.45)}
mark.seg.low{text-decoration:underline wavy var(--low);text-decoration-skip-ink:none;text-underline-offset:3px}
.tag{cursor:pointer}
.tag::before{content:attr(data-pointer);display:inline-block;margin:0 2px 0 1px;padding:0 4px;border-radius:3px;
font:600 10px/15px system-ui,sans-serif;color:#fff;background:#3d4a5e;vertical-align:1px;white-space:nowrap}
.tag.c4::before{box-shadow:inset 3px 0 #4caf50}.tag.c3::before{box-shadow:inset 3px 0 #9ccc65}
.tag.c2::before{box-shadow:inset 3px 0 #fbc02d}.tag.c1::before{box-shadow:inset 3px 0 #fb8c00}
.tag.c0::before{box-shadow:inset 3px 0 #e53935}.tag.cn::before{box-shadow:inset 3px 0 #90a4c8}
.tag.low::before{background:var(--low)}
.tag.empty::after{content:"∅";color:var(--muted)}
body.no-labels .tag{display:none}
.hot,.tag.hot::before{outline:2px solid var(--accent);outline-offset:1px}
table{border-collapse:collapse;width:100%;font-size:13px}
th{position:sticky;top:0;background:#eef1f6;text-align:left;font-weight:600;padding:6px 8px;border-bottom:1px solid var(--line)}
td{padding:5px 8px;border-bottom:1px solid #eef0f4;vertical-align:top}
td.pointer code{font:12px ui-monospace,Menlo,Consolas,"DejaVu Sans Mono",monospace;overflow-wrap:break-word}
td.value{overflow-wrap:anywhere;font-family:ui-monospace,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
td.span{white-space:nowrap;font-variant-numeric:tabular-nums;color:var(--muted)}
tr[data-field]{cursor:pointer}
tr[data-field]:hover,tr.hot{background:#f1f5fd}
tr.low{background:#fff3f2}
tr.low td.pointer{box-shadow:inset 3px 0 var(--low)}
tr.ungrounded td.value{color:var(--muted)}
.badge{display:inline-block;margin-left:4px;padding:0 6px;border-radius:8px;font-size:11px;line-height:16px;white-space:nowrap}
.badge.low,.badge.failed{background:var(--low);color:#fff}
.badge.ungrounded{background:#e4e7ec;color:#414b5a}
.badge.grounded{background:#e2ecfb;color:#234a9a}
#doclist a.current .badge.ungrounded{background:#dfe7fb}
.empty{color:var(--muted);font-style:italic}
"""

PAGE_SCRIPT = """
(function () {
  var sections = document.querySelectorAll("section.doc");
  var links = document.querySelectorAll("#doclist a");
  function show(number) {
    sections.forEach(function (s) { s.hidden = s.dataset.doc !== number; });
    links.forEach(function (a) {
      var on = a.dataset.doc === number;
      a.classList.toggle("current", on);
      if (on) { reveal(a); }
    });
  }
  function reveal(link) {  // scroll only the list, never the page
    var list = link.closest("nav");
    var top = link.offsetTop, bottom = top + link.offsetHeight;
    if (top < list.scrollTop || bottom > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }
  function fromHash() {
    var match = /^#doc-(\\d+)$/.exec(location.hash);
    if (match && document.getElementById("document-" + match[1])) {
      show(match[1]);
      document.querySelector("main").scrollTop = 0;
    }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();

  var filter = document.getElementById("filter"), flagged = document.getElementById("only-flagged");
  function applyFilter() {
    var query = filter.value.toLowerCase();
    links.forEach(function (a) {
      var item = a.parentElement, name = a.querySelector(".name").textContent.toLowerCase();
      item.hidden = name.indexOf(query) < 0 || (flagged.checked && item.dataset.flagged !== "1");
    });
  }
  filter.addEventListener("input", applyFilter);
  flagged.addEventListener("change", applyFilter);

  function step(delta) {
    var visible = Array.prototype.filter.call(links, function (a) { return !a.parentElement.hidden; });
    var at = visible.findIndex(function (a) { return a.classList.contains("current"); });
    var next = visible[Math.min(visible.length - 1, Math.max(0, at + delta))];
    if (next) { location.hash = "doc-" + next.dataset.doc; }
  }
  document.addEventListener("keydown", function (event) {
    if (event.target.tagName === "INPUT" || event.altKey || event.ctrlKey || event.metaKey) { return; }
    if (event.key === "j" || event.key === "ArrowDown") { step(1); event.preventDefault(); }
    if (event.key === "k" || event.key === "ArrowUp") { step(-1); event.preventDefault(); }
  });

  document.getElementById("labels").addEventListener("change", function (event) {
    document.body.classList.toggle("no-labels", !event.target.checked);
  });

  function parts(section, field) {
    return section.querySelectorAll('[data-spans~="' + field + '"], [data-field="' + field + '"]');
  }
  function fieldOf(target) {
    var element = target.closest && target.closest("[data-field], mark.seg");
    if (!element) { return null; }
    var field = element.dataset.field !== undefined ? element.dataset.field : element.dataset.inner;
    return {section: element.closest("section.doc"), field: field, inTable: element.tagName === "TR"};
  }
  var lit = [];
  document.addEventListener("mouseover", function (event) {
    lit.forEach(function (e) { e.classList.remove("hot"); });
    var found = fieldOf(event.target);
    lit = found ? Array.prototype.slice.call(parts(found.section, found.field)) : [];
    lit.forEach(function (e) { e.classList.add("hot"); });
  });
  document.addEventListener("click", function (event) {
    var found = fieldOf(event.target);
    if (!found) { return; }
    var field = found.field, section = found.section;
    var goal = found.inTable ? section.querySelector('[data-spans~="' + field + '"], .tag[data-field="' + field + '"]')
                             : section.querySelector('tr[data-field="' + field + '"]');
    if (goal) { goal.scrollIntoView({block: "center", behavior: "smooth"}); }
  });
})();
"""
