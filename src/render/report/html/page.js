// The whose report page (issue 27). Every number is computed here from the embedded data's
// entries — (node, bucket, weight, self owner, owner, anywhere set) — so that a time range,
// an owner or a zoomed frame recomputes every panel exactly; with every bucket selected the
// table equals `whose report --format json` to the integer.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("whose-data").textContent);
  var VIEWS = ["self", "owner", "anywhere"];
  var state = {
    input: 0, diff: false, by: "owner", sort: { key: "owner", desc: true },
    selected: null, zoom: 0, icicle: true, search: "", buckets: null
  };
  var $ = function (id) { return document.getElementById(id); };

  // ---- weights and units ----
  function fmt(unit, w) {
    if (unit === "nanoseconds") {
      if (w < 1e3) return w + " ns";
      var t = w < 1e6 ? [1e3, "µs"] : w < 1e9 ? [1e6, "ms"] : [1e9, "s"];
      return (w / t[0]).toFixed(2) + " " + t[1];
    }
    if (unit === "bytes") {
      if (w < 1024) return w + " B";
      var b = w < 1048576 ? [1024, "KiB"] : w < 1073741824 ? [1048576, "MiB"] : [1073741824, "GiB"];
      return (w / b[0]).toFixed(2) + " " + b[1];
    }
    return String(w);
  }
  function pct(part, total) { return total > 0 ? (part * 100 / total).toFixed(1) + "%" : "0.0%"; }
  function inBuckets(b) { return state.buckets === null || (b >= state.buckets.from && b <= state.buckets.to); }

  // ---- the call tree of one input (children sorted by name, as flame graphs draw them) ----
  function prepare(input) {
    if (input.children) return;
    var n = input.nodes.parent.length;
    input.children = [];
    for (var i = 0; i < n; i++) input.children.push([]);
    for (var j = 1; j < n; j++) input.children[input.nodes.parent[j]].push(j);
    var name = function (k) { return input.frames.name[input.nodes.frame[k]]; };
    input.children.forEach(function (c) { c.sort(function (a, b) { return name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0; }); });
    input.depth = new Int32Array(n);
    for (var k = 1; k < n; k++) input.depth[k] = input.depth[input.nodes.parent[k]] + 1;
  }

  // Totals and self weights per node, and the owner table, for the selected buckets.
  function compute(input) {
    prepare(input);
    var n = input.nodes.parent.length, parent = input.nodes.parent;
    var total = new Float64Array(n), self = new Float64Array(n);
    var owners = data.owners.length, cats = data.categories.length;
    var ow = VIEWS.map(function () { return new Float64Array(owners); });
    var cw = VIEWS.map(function () { return new Float64Array(cats); });
    var stackless = 0, sum = 0;
    var cat = data.owners.map(function (o) { return o.category_index; });
    input.entries.forEach(function (e) {
      var node = e[0], w = e[2];
      if (!inBuckets(e[1])) return;
      sum += w;
      self[node] += w;
      for (var k = node; ; k = parent[k]) { total[k] += w; if (k === 0) break; }
      if (e[5] === null) { stackless += w; return; }
      ow[0][e[3]] += w; ow[1][e[4]] += w;
      cw[0][cat[e[3]]] += w; cw[1][cat[e[4]]] += w;
      var seen = {};
      input.sets[e[5]].forEach(function (o) {
        ow[2][o] += w;
        if (!seen[cat[o]]) { seen[cat[o]] = 1; cw[2][cat[o]] += w; }
      });
    });
    return { total: total, self: self, owners: ow, categories: cw, stackless: stackless, sum: sum };
  }

  // ---- the owner table ----
  function table(input, r) {
    var rows = [];
    var list = state.by === "owner" ? data.owners : data.categories;
    var w = state.by === "owner" ? r.owners : r.categories;
    list.forEach(function (o, i) {
      var v = VIEWS.map(function (_, k) { return w[k][i]; });
      if (v[0] + v[1] + v[2] > 0) rows.push({ i: i, name: o.name, color: o.color, cat: o.category, t: o.transparent, g: o.guessed, v: v });
    });
    if (r.stackless > 0) rows.push({ i: -1, name: "(no stack)", color: "#ccc", cat: "", v: [r.stackless, r.stackless, r.stackless] });
    var key = VIEWS.indexOf(state.sort.key);
    rows.sort(function (a, b) {
      var d = key >= 0 ? a.v[key] - b.v[key] : (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      if (d === 0) d = b.v[1] - a.v[1];
      return state.sort.desc ? -d : d;
    });
    var unit = input.unit;
    var head = "<tr><th data-sort='name'>" + state.by + "</th>" + (state.by === "owner" ? "<th data-sort='name'>category</th>" : "") +
      VIEWS.map(function (v) { return "<th data-sort='" + v + "'>" + v + (state.sort.key === v ? (state.sort.desc ? " ▾" : " ▴") : "") + "</th><th></th>"; }).join("") + "</tr>";
    var body = rows.map(function (row) {
      var cls = "row" + (state.selected === row.i && row.i >= 0 ? " selected" : "");
      return "<tr class='" + cls + "' data-index='" + row.i + "' data-name='" + esc(row.name) + "'>" +
        "<td><span class='swatch' style='background:" + row.color + "'></span>" + esc(row.name) + (row.g ? "~" : "") + "</td>" +
        (state.by === "owner" ? "<td class='muted'>" + esc(row.cat) + (row.t ? "*" : "") + "</td>" : "") +
        row.v.map(function (x, k) {
          return "<td data-view='" + VIEWS[k] + "' data-weight='" + x + "'>" + pct(x, r.sum) + "</td><td class='muted'>" + fmt(unit, x) + "</td>";
        }).join("") + "</tr>";
    }).join("");
    var t = $("owners");
    t.innerHTML = head + body;
    t.setAttribute("data-total", r.sum);
    Array.prototype.forEach.call(t.querySelectorAll("th[data-sort]"), function (th) {
      th.onclick = function () {
        var k = th.getAttribute("data-sort");
        state.sort = { key: k, desc: state.sort.key === k ? !state.sort.desc : k !== "name" };
        render();
      };
    });
    Array.prototype.forEach.call(t.querySelectorAll("tr.row"), function (tr) {
      tr.onclick = function () {
        var i = +tr.getAttribute("data-index");
        state.selected = state.by === "owner" && i >= 0 && state.selected !== i ? i : null;
        render();
      };
    });
    $("total").textContent = fmt(unit, r.sum) + (state.buckets ? " in the selected time range" : "");
  }

  function esc(s) {
    return String(s).replace(/[&<>'"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
  }

  // ---- the flame graph, on a canvas ----
  var ROW = 16, drawn = [];
  function matches(input) {
    if (!state.search) return null;
    var re;
    try { re = new RegExp(state.search, "i"); } catch (e) { re = null; }
    return input.frames.name.map(function (n) { return re ? re.test(n) : n.toLowerCase().indexOf(state.search.toLowerCase()) >= 0; });
  }
  function flame(input, r, base) {
    var canvas = $("flame"), ctx = canvas.getContext("2d");
    var width = canvas.parentNode.clientWidth || 900;
    var maxDepth = 0;
    for (var i = 0; i < input.depth.length; i++) if (input.depth[i] > maxDepth) maxDepth = input.depth[i];
    var rows = maxDepth + 1;
    var ratio = window.devicePixelRatio || 1;
    canvas.width = width * ratio; canvas.height = rows * ROW * ratio;
    canvas.style.height = rows * ROW + "px";
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    drawn = [];
    var hit = matches(input), matched = 0;
    var owner = input.frames.owner, frameOf = input.nodes.frame;
    var scale = r.total[state.zoom] > 0 ? width / r.total[state.zoom] : 0;
    function color(node) {
      if (node === 0) return "#ddd";
      var f = frameOf[node];
      if (hit && hit[f]) return "#e040e0";
      if (base) return diffColor(input, r, base, node);
      var c = data.owners[owner[f]].color;
      if (state.selected !== null && owner[f] !== state.selected) return "#e8e8e8";
      return c;
    }
    function box(node, x, depth, counted) {
      var w = r.total[node] * scale;
      if (w < 0.3) return;
      var y = state.icicle ? depth * ROW : (rows - 1 - depth) * ROW;
      ctx.fillStyle = color(node);
      ctx.fillRect(x, y, Math.max(w - 0.5, 0.3), ROW - 1);
      var isHit = hit && node !== 0 && hit[frameOf[node]];
      if (isHit && !counted) matched += r.total[node];
      if (w > 24) {
        ctx.fillStyle = "#000";
        var label = node === 0 ? "all" : input.frames.name[frameOf[node]];
        var fit = Math.floor((w - 6) / 6.2);
        ctx.fillText(label.length > fit ? label.slice(0, Math.max(fit - 2, 0)) + ".." : label, x + 3, y + ROW / 2);
      }
      drawn.push([x, y, w, node]);
      var cx = x;
      input.children[node].forEach(function (c) { box(c, cx, depth + 1, counted || isHit); cx += r.total[c] * scale; });
    }
    // the zoomed node's ancestors are drawn full width above (below) it
    var depth0 = 0;
    var path = [];
    for (var p = state.zoom; p !== 0; p = input.nodes.parent[p]) path.unshift(p);
    (state.zoom === 0 ? [] : [0].concat(path.slice(0, -1))).forEach(function (n) {
      var y = state.icicle ? depth0 * ROW : (rows - 1 - depth0) * ROW;
      ctx.fillStyle = n === 0 ? "#ddd" : color(n);
      ctx.globalAlpha = 0.6; ctx.fillRect(0, y, width, ROW - 1); ctx.globalAlpha = 1;
      ctx.fillStyle = "#000";
      ctx.fillText(n === 0 ? "all" : input.frames.name[frameOf[n]], 3, y + ROW / 2);
      drawn.push([0, y, width, n]);
      depth0++;
    });
    box(state.zoom, 0, depth0, false);
    canvas.setAttribute("data-zoom", state.zoom);
    canvas.setAttribute("data-drawn", drawn.length);
    $("matched").textContent = hit ? "matched " + pct(matched, r.total[state.zoom]) + " of " + (state.zoom ? "the zoomed frame" : "all") : "";
    $("matched").setAttribute("data-matched", hit ? matched : "");
  }

  function diffColor(input, r, base, node) {
    var key = pathKey(input, node);
    var before = base.byPath[key] || 0;
    var d = r.total[node] / Math.max(r.sum, 1) - before / Math.max(base.sum, 1);
    var t = Math.min(Math.abs(d) * 20, 1);
    var c = Math.round(255 - 155 * t);
    return d > 0 ? "rgb(255," + c + "," + c + ")" : d < 0 ? "rgb(" + c + "," + c + ",255)" : "#eee";
  }
  function pathKey(input, node) {
    var parts = [];
    for (var k = node; k !== 0; k = input.nodes.parent[k]) parts.push(input.frames.name[input.nodes.frame[k]]);
    return parts.reverse().join(";");
  }
  function baseTotals() {
    var a = data.inputs[0];
    var r = compute(a);
    var byPath = {};
    for (var k = 1; k < a.nodes.parent.length; k++) byPath[pathKey(a, k)] = r.total[k];
    return { byPath: byPath, sum: r.sum };
  }

  function nodeAt(ev) {
    var rect = $("flame").getBoundingClientRect();
    var x = ev.clientX - rect.left, y = ev.clientY - rect.top;
    for (var i = drawn.length - 1; i >= 0; i--) {
      var d = drawn[i];
      if (x >= d[0] && x < d[0] + d[2] && y >= d[1] && y < d[1] + ROW) return d[3];
    }
    return null;
  }

  function describe(input, r, node) {
    if (node === 0) return "all: " + fmt(input.unit, r.total[0]);
    var f = input.nodes.frame[node], o = data.owners[input.frames.owner[f]];
    return input.frames.name[f] + "\nowner: " + o.name + " (" + o.category + (o.transparent ? ", transparent" : "") + ")" +
      "\nrule: " + input.frames.rule[f] +
      "\ntotal: " + fmt(input.unit, r.total[node]) + " (" + pct(r.total[node], r.sum) + ")" +
      "\nself: " + fmt(input.unit, r.self[node]) + " (" + pct(r.self[node], r.sum) + ")";
  }

  // ---- details: an owner's heaviest functions, or the stacks through a frame ----
  function ownerFunctions(input, r, o) {
    var flat = {}, cum = {}, names = input.frames.name;
    var n = input.nodes.parent.length;
    for (var k = 1; k < n; k++) {
      var f = input.nodes.frame[k];
      if (input.frames.owner[f] !== o) continue;
      flat[f] = (flat[f] || 0) + r.self[k];
      var nested = false;
      for (var p = input.nodes.parent[k]; p !== 0; p = input.nodes.parent[p]) if (input.nodes.frame[p] === f) { nested = true; break; }
      if (!nested) cum[f] = (cum[f] || 0) + r.total[k];
    }
    var list = Object.keys(cum).map(Number).sort(function (a, b) { return cum[b] - cum[a]; }).slice(0, 20);
    return "heaviest functions of " + data.owners[o].name + " (flat, cum)\n" + list.map(function (f) {
      return pct(flat[f] || 0, r.sum).padStart(7) + " " + pct(cum[f], r.sum).padStart(7) + "  " + names[f];
    }).join("\n");
  }
  function stacksThrough(input, r, node) {
    var under = {};
    var n = input.nodes.parent.length;
    for (var k = 0; k < n; k++) {
      for (var p = k; ; p = input.nodes.parent[p]) { if (p === node) { under[k] = true; break; } if (p === 0) break; }
    }
    var ends = Object.keys(under).map(Number).filter(function (k) { return r.self[k] > 0; });
    ends.sort(function (a, b) { return r.self[b] - r.self[a]; });
    return "stacks through " + input.frames.name[input.nodes.frame[node]] + " (" + pct(r.total[node], r.sum) + "), heaviest first\n" +
      ends.slice(0, 12).map(function (k) { return pct(r.self[k], r.sum).padStart(7) + "  " + pathKey(input, k).split(";").join(" → "); }).join("\n");
  }

  // ---- time ----
  var timeline = null;
  function drawTime(input) {
    var panel = $("time-panel");
    if (!input.buckets || input.buckets.length < 2) { panel.style.display = "none"; timeline = null; return; }
    panel.style.display = "";
    var saved = state.buckets;
    state.buckets = null;
    var perBucket = input.buckets.map(function () { return new Float64Array(data.owners.length); });
    var totals = input.buckets.map(function () { return 0; });
    input.entries.forEach(function (e) { totals[e[1]] += e[2]; if (e[5] !== null) perBucket[e[1]][e[4]] += e[2]; });
    state.buckets = saved;
    var whole = compute(input);
    var order = data.owners.map(function (_, i) { return i; }).filter(function (i) { return whole.owners[1][i] > 0; });
    order.sort(function (a, b) { return whole.owners[1][b] - whole.owners[1][a]; });
    timeline = WhoseTimeline.draw($("timeline"), {
      buckets: input.buckets, first_ns: input.first_ns, totals: totals, warmup: input.warmup,
      series: order.map(function (o) { return { name: data.owners[o].name, color: data.owners[o].color, weights: perBucket.map(function (b) { return b[o]; }) }; })
    }, function (sel) { state.buckets = sel; render(); });
    $("time-note").textContent = (input.warmup ? input.warmup.finding + ". " : "") + "Drag to select a time range for every panel; a click or Escape clears it.";
  }

  // ---- the page ----
  function render() {
    var input = data.inputs[state.input];
    var r = compute(input);
    table(input, r);
    var base = state.diff && state.input > 0 ? baseTotals() : null;
    flame(input, r, base);
    var detail = $("details");
    if (state.selected !== null) detail.textContent = ownerFunctions(input, r, state.selected);
    else if (state.zoom) detail.textContent = stacksThrough(input, r, state.zoom);
    else detail.textContent = "click an owner for its heaviest functions, a frame to zoom and see the stacks through it";
    $("pruned").textContent = input.pruned.nodes > 0 ? input.pruned.nodes + " nodes narrower than " + data.min_share_percent + "% of the total not drawn (" + pct(input.pruned.weight, input.total) + " of the weight ends in them; it stays in the numbers)" : "every node drawn";
    window.whosePage.last = r;
  }

  function setup() {
    var select = $("input");
    data.inputs.forEach(function (input, i) {
      var o = document.createElement("option");
      o.value = i; o.textContent = input.path;
      select.appendChild(o);
    });
    select.onchange = function () { state.input = +select.value; state.zoom = 0; state.buckets = null; drawTime(data.inputs[state.input]); render(); };
    $("input-row").style.display = data.inputs.length > 1 ? "" : "none";
    $("diff").onchange = function () { state.diff = $("diff").checked; render(); };
    $("by").onchange = function () { state.by = $("by").value; state.selected = null; render(); };
    $("icicle").onchange = function () { state.icicle = !$("icicle").checked; render(); };
    $("search").oninput = function () { state.search = $("search").value; render(); };
    var canvas = $("flame"), tip = $("tip");
    canvas.onmousemove = function (ev) {
      var node = nodeAt(ev);
      if (node === null) { tip.style.display = "none"; return; }
      tip.textContent = describe(data.inputs[state.input], window.whosePage.last, node);
      tip.style.whiteSpace = "pre-wrap";
      tip.style.display = "block";
      tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 540) + "px";
      tip.style.top = ev.clientY + 14 + "px";
    };
    canvas.onmouseleave = function () { tip.style.display = "none"; };
    canvas.onclick = function (ev) {
      var node = nodeAt(ev);
      if (node !== null) { state.zoom = node; state.selected = null; render(); }
    };
    $("reset").onclick = function () { state.zoom = 0; state.selected = null; state.search = ""; $("search").value = ""; render(); };
    drawTime(data.inputs[0]);
    render();
  }

  window.whosePage = {
    data: data, state: state, render: render,
    selectTime: function (from, to) { if (timeline) timeline.select(from, to); },
    // where a frame (by name) is drawn, for tests that click it
    frameRect: function (name) {
      var input = data.inputs[state.input];
      for (var i = 0; i < drawn.length; i++) {
        var d = drawn[i];
        if (d[3] !== 0 && input.frames.name[input.nodes.frame[d[3]]] === name) return { x: d[0], y: d[1], w: d[2], h: ROW, node: d[3] };
      }
      return null;
    }
  };
  setup();
  // how long the page took to become interactive (bench/html.sh reads it)
  window.whosePage.readyMs = performance.now();
  document.documentElement.setAttribute("data-ready", "1");
})();
