// Owner shares over time (issue 27): a stacked area chart of the owner view per time bucket,
// under which a drag selects a range of buckets for every other panel of the page.
//
// WhoseTimeline.draw(container, model, onSelect)
//   model.buckets: [{start_ns, end_ns}], the shown buckets in time order
//   model.first_ns: the first sample's time (offsets are shown from it)
//   model.series: [{name, color, weights: [w per bucket]}], heaviest owner first
//   model.totals: [total per bucket] (a bucket's weights may not fill its total: samples
//     without a stack are in no owner)
//   model.warmup: {end_bucket, time} or null: shaded, with its `--time` slice
//   onSelect(selection): called with {from, to} (bucket indices, both included) after a drag,
//     or null when the selection is cleared (a click without a drag, or Escape)
// Returns {select(from, to), clear()} to set the selection from outside (the tests use it).
var WhoseTimeline = (function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var HEIGHT = 140, AXIS = 18, PAD = 6;

  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function seconds(ns) {
    var s = ns / 1e9;
    return (s >= 100 ? s.toFixed(0) : s >= 10 ? s.toFixed(1) : s.toFixed(2)) + " s";
  }

  function draw(container, model, onSelect) {
    container.textContent = "";
    var n = model.buckets.length;
    var width = Math.max(container.clientWidth || 800, 200);
    var svg = el("svg", {
      width: width, height: HEIGHT + AXIS, "class": "whose-timeline",
      role: "img", "aria-label": "owner view share per time bucket"
    }, container);
    var plot = width - 2 * PAD;
    var x = function (i) { return PAD + plot * i / n; };
    var y = function (share) { return PAD + (HEIGHT - 2 * PAD) * (1 - share); };
    // stacked shares: each owner's band sits on the ones before it
    var base = new Array(n).fill(0);
    model.series.forEach(function (s) {
      var top = base.map(function (b, i) {
        var t = model.totals[i];
        return b + (t > 0 ? s.weights[i] / t : 0);
      });
      var d = "";
      for (var i = 0; i < n; i++) {
        d += (i ? "L" : "M") + x(i) + "," + y(top[i]) + "L" + x(i + 1) + "," + y(top[i]);
      }
      for (var j = n - 1; j >= 0; j--) {
        d += "L" + x(j + 1) + "," + y(base[j]) + "L" + x(j) + "," + y(base[j]);
      }
      var band = el("path", { d: d + "Z", fill: s.color, "class": "band", "data-owner": s.name }, svg);
      el("title", {}, band).textContent = s.name;
      base = top;
    });
    // the time axis: the first, middle and last bucket's start, from the first sample
    [0, Math.floor(n / 2), n - 1].forEach(function (i) {
      if (i < 0 || i >= n) return;
      var t = el("text", { x: x(i) + 2, y: HEIGHT + AXIS - 4, "class": "axis" }, svg);
      t.textContent = "+" + seconds(model.buckets[i].start_ns - model.first_ns);
    });
    if (model.warmup) {
      var w = el("rect", {
        x: x(0), y: PAD, width: x(model.warmup.end_bucket) - x(0), height: HEIGHT - 2 * PAD,
        "class": "warmup"
      }, svg);
      el("title", {}, w).textContent = "warm-up: skip it with --time " + model.warmup.time;
    }
    var shade = el("rect", { x: 0, y: PAD, width: 0, height: HEIGHT - 2 * PAD, "class": "selection", visibility: "hidden" }, svg);
    var selection = null;

    function bucketAt(clientX) {
      var r = svg.getBoundingClientRect();
      var i = Math.floor((clientX - r.left - PAD) / plot * n);
      return Math.max(0, Math.min(n - 1, i));
    }
    function show(from, to) {
      if (from === null) {
        shade.setAttribute("visibility", "hidden");
        return;
      }
      shade.setAttribute("x", x(from));
      shade.setAttribute("width", x(to + 1) - x(from));
      shade.setAttribute("visibility", "visible");
    }
    function commit(sel) {
      selection = sel;
      show(sel ? sel.from : null, sel ? sel.to : null);
      svg.setAttribute("data-selection", sel ? sel.from + "-" + sel.to : "");
      onSelect(sel);
    }
    var start = null, moved = false;
    svg.addEventListener("mousedown", function (e) {
      start = bucketAt(e.clientX);
      moved = false;
      e.preventDefault();
    });
    window.addEventListener("mousemove", function (e) {
      if (start === null) return;
      var i = bucketAt(e.clientX);
      if (i !== start) moved = true;
      show(Math.min(start, i), Math.max(start, i));
    });
    window.addEventListener("mouseup", function (e) {
      if (start === null) return;
      var i = bucketAt(e.clientX);
      var from = Math.min(start, i), to = Math.max(start, i);
      start = null;
      commit(moved ? { from: from, to: to } : null);
    });
    window.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && selection) commit(null);
    });
    return {
      select: function (from, to) { commit({ from: from, to: to }); },
      clear: function () { commit(null); }
    };
  }

  return { draw: draw };
})();
