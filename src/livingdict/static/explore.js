/* The Living Dictionary: explorables, one shared module (plain JavaScript,
 * SVG, no library, no network). livingdict/explore.py writes, in a lesson's
 * output, <div class="ld-explorable" data-kind="..."> holding the exported
 * data as JSON; this module draws it and recomputes it as the reader moves
 * the controls. The numbers behind the drawing are in el.ldState
 * (LDExplore.read(el)): tests/browser/test_explorables.py compares them
 * with the values torch computed in the lesson's run.
 * Labels: t("English") looks up window.LD_EXPLORE_I18N (the Japanese build
 * injects it from locale/ja/LC_MESSAGES/explore.po) and falls back to the
 * English text. Babel extracts every t("...") into explore.pot.
 */
(function () {
  "use strict";
  var VERSION = 1;
  if (window.LDExplore && window.LDExplore.version >= VERSION) {
    window.LDExplore.boot();
    return;
  }
  var SVGNS = "http://www.w3.org/2000/svg";
  var uid = 0;

  function t(text) {
    var cat = window.LD_EXPLORE_I18N || {};
    return cat[text] || text;
  }
  function fmt(text, args) {
    return text.replace(/\{(\w+)\}/g, function (m, k) {
      return k in args ? args[k] : m;
    });
  }
  function num(v, digits) {
    if (!isFinite(v)) return v > 0 ? "∞" : String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e4)) return v.toExponential(1);
    return v.toFixed(digits === undefined ? 2 : digits);
  }

  /* ---- data ---- */
  function bytes(b64) {
    var s = atob(b64), out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  function decode(a) {
    var raw = bytes(a.b64), vals;
    if (a.dtype === "float32") vals = new Float32Array(raw.buffer);
    else if (a.dtype === "float64") vals = new Float64Array(raw.buffer);
    else vals = raw;
    var out = new Float64Array(vals.length), s = a.scale || 1;
    for (var i = 0; i < vals.length; i++) out[i] = vals[i] / s;
    return { shape: a.shape, v: out, cols: a.shape[a.shape.length - 1] };
  }
  function row(m, i) {
    return m.v.subarray(i * m.cols, (i + 1) * m.cols);
  }
  function bits(a) {
    var raw = bytes(a.b64), n = a.shape[0] * a.shape[1];
    var out = new Float64Array(n);
    for (var i = 0; i < n; i++) {
      out[i] = (raw[i >> 3] >> (7 - (i & 7))) & 1 ? 1 : -1;
    }
    return { shape: a.shape, v: out, cols: a.shape[1] };
  }

  /* ---- the formulas (the package's, in float64) ---- */
  function dot(a, b) {
    var s = 0;
    for (var i = 0; i < a.length; i++) s += a[i] * b[i];
    return s;
  }
  function softmax(s, beta) {
    var n = s.length, w = new Float64Array(n), i, best = 0;
    if (beta === Infinity) {
      for (i = 1; i < n; i++) if (s[i] > s[best]) best = i;
      w[best] = 1;
      return w;
    }
    var m = -Infinity, z = 0;
    for (i = 0; i < n; i++) if (s[i] > m) m = s[i];
    for (i = 0; i < n; i++) {
      w[i] = s[i] === -Infinity ? 0 : Math.exp(beta * (s[i] - m));
      z += w[i];
    }
    for (i = 0; i < n; i++) w[i] /= z;
    return w;
  }
  function lookup(w, V) {
    var out = new Float64Array(V.cols);
    for (var i = 0; i < w.length; i++) {
      if (w[i] === 0) continue;
      var r = row(V, i);
      for (var j = 0; j < V.cols; j++) out[j] += w[i] * r[j];
    }
    return out;
  }
  function argmax(a) {
    var b = 0;
    for (var i = 1; i < a.length; i++) if (a[i] > a[b]) b = i;
    return b;
  }
  function max(a) {
    return a[argmax(a)];
  }
  function norm(a) {
    return Math.sqrt(dot(a, a));
  }
  function matmul(a, b, n) {
    var c = new Float64Array(n * n);
    for (var i = 0; i < n; i++)
      for (var k = 0; k < n; k++) {
        var x = a[i * n + k];
        if (x === 0) continue;
        for (var j = 0; j < n; j++) c[i * n + j] += x * b[k * n + j];
      }
    return c;
  }
  function dobrushin(p, n) {
    var best = 0;
    for (var i = 0; i < n; i++)
      for (var j = i + 1; j < n; j++) {
        var s = 0;
        for (var k = 0; k < n; k++) s += Math.abs(p[i * n + k] - p[j * n + k]);
        if (s > best) best = s;
      }
    return 0.5 * best;
  }
  function list(a) {
    return Array.prototype.slice.call(a);
  }

  /* ---- drawing ---- */
  function h(tag, attrs, kids) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) {
      if (c) e.appendChild(c);
    });
    return e;
  }
  function s(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    if (parent) parent.appendChild(e);
    return e;
  }
  function panel(title, width, height) {
    var svg = s("svg", {
      viewBox: "0 0 " + width + " " + height,
      width: width,
      height: height,
      "aria-hidden": "true",
      class: "ld-panel",
    });
    var box = h("figure", { class: "ld-box" }, [
      svg,
      h("figcaption", { text: title }),
    ]);
    return { svg: svg, box: box, w: width, h: height };
  }
  function clear(svg) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
  }
  /* an image (side × side), values in [lo, hi] as ink */
  function image(p, values, side, lo, hi) {
    clear(p.svg);
    var c = p.w / side;
    for (var i = 0; i < side * side; i++) {
      var v = (values[i] - lo) / (hi - lo || 1);
      s("rect", {
        x: (i % side) * c,
        y: Math.floor(i / side) * c,
        width: c + 0.3,
        height: c + 0.3,
        class: "ld-ink",
        "fill-opacity": Math.max(0, Math.min(1, v)).toFixed(3),
      }, p.svg);
    }
    s("rect", { x: 0, y: 0, width: p.w, height: p.h, class: "ld-frame" }, p.svg);
  }
  /* bars from a zero line; signed values below it */
  function bars(p, values, opts) {
    opts = opts || {};
    clear(p.svg);
    var n = values.length, top = opts.max || 0, bottom = opts.min || 0;
    for (var i = 0; i < n; i++) {
      top = Math.max(top, values[i]);
      bottom = Math.min(bottom, values[i]);
    }
    var pad = 14, hh = p.h - 2 * pad, span = top - bottom || 1;
    var y0 = pad + (hh * top) / span, bw = (p.w - 8) / n;
    for (i = 0; i < n; i++) {
      var y = pad + (hh * (top - Math.max(values[i], 0))) / span;
      var hv = (hh * Math.abs(values[i])) / span;
      s("rect", {
        x: 4 + i * bw + bw * 0.1,
        y: y,
        width: Math.max(bw * 0.8, 0.6),
        height: Math.max(hv, 0.5),
        class: opts.highlight === i || (opts.mark && opts.mark[i])
          ? "ld-bar ld-hi" : "ld-bar",
      }, p.svg);
    }
    s("line", { x1: 0, x2: p.w, y1: y0, y2: y0, class: "ld-axis" }, p.svg);
    s("text", { x: 2, y: 10, class: "ld-tick", text: num(top) }, p.svg);
    if (opts.labels) {
      opts.labels.forEach(function (lab, i) {
        s("text", {
          x: 4 + (i + 0.5) * bw,
          y: p.h - 2,
          "text-anchor": "middle",
          class: "ld-tick",
          text: lab,
        }, p.svg);
      });
    }
  }
  /* a line over many points, with separators between groups */
  function line(p, values, groups) {
    clear(p.svg);
    var n = values.length, lo = Math.min(0, Math.min.apply(null, values));
    var hi = Math.max.apply(null, values), pad = 14;
    var sx = (p.w - 8) / (n - 1), sy = (p.h - 2 * pad) / (hi - lo || 1);
    var pts = [];
    for (var i = 0; i < n; i++) {
      pts.push((4 + i * sx).toFixed(1) + "," +
        (p.h - pad - (values[i] - lo) * sy).toFixed(1));
    }
    (groups || []).forEach(function (g) {
      var x = 4 + g.start * sx;
      s("line", { x1: x, x2: x, y1: pad, y2: p.h - pad, class: "ld-grid" }, p.svg);
      s("text", {
        x: 4 + (g.start + g.size / 2) * sx,
        y: p.h - 2,
        "text-anchor": "middle",
        class: "ld-tick",
        text: g.label,
      }, p.svg);
    });
    var z = p.h - pad - (0 - lo) * sy;
    s("line", { x1: 0, x2: p.w, y1: z, y2: z, class: "ld-axis" }, p.svg);
    s("polyline", { points: pts.join(" "), class: "ld-line" }, p.svg);
    s("text", { x: 2, y: 10, class: "ld-tick", text: num(hi) }, p.svg);
  }
  /* a matrix of weights in [0, 1] */
  function matrix(p, m, n, highlightRow) {
    clear(p.svg);
    var c = p.w / n;
    for (var i = 0; i < n; i++)
      for (var j = 0; j < n; j++) {
        s("rect", {
          x: j * c, y: i * c, width: c + 0.3, height: c + 0.3,
          class: "ld-ink", "fill-opacity": Math.min(1, m[i * n + j]).toFixed(3),
        }, p.svg);
      }
    if (highlightRow !== undefined) {
      s("rect", {
        x: 0, y: highlightRow * c, width: p.w, height: c, class: "ld-sel",
      }, p.svg);
    }
    s("rect", { x: 0, y: 0, width: p.w, height: p.h, class: "ld-frame" }, p.svg);
  }

  /* ---- controls ---- */
  function control(root, label, input, output) {
    var id = "ld-c" + ++uid;
    input.id = id;
    var wrap = h("div", { class: "ld-control" }, [
      h("label", { for: id, text: label }),
      input,
      output || null,
    ]);
    root.appendChild(wrap);
    return input;
  }
  function range(root, name, label, n, value, show) {
    var out = h("output", { class: "ld-value" });
    var input = h("input", {
      type: "range", name: name, min: 0, max: n - 1, step: 1, value: value,
    });
    control(root, label, input, out);
    var sync = function () {
      out.textContent = show(+input.value);
      input.setAttribute("aria-valuetext", out.textContent);
    };
    input.addEventListener("input", sync);
    sync();
    return input;
  }
  function select(root, name, label, options, value) {
    var input = h("select", { name: name });
    options.forEach(function (o, i) {
      var opt = h("option", { value: String(i), text: o });
      input.appendChild(opt);
    });
    input.value = String(value);
    return control(root, label, input);
  }
  function checkbox(root, name, label, value) {
    var input = h("input", { type: "checkbox", name: name });
    input.checked = !!value;
    var id = "ld-c" + ++uid;
    input.id = id;
    root.appendChild(h("div", { class: "ld-control ld-check" }, [
      input, h("label", { for: id, text: label }),
    ]));
    return input;
  }

  /* a drawing grid: side × side toggle buttons (arrow keys move) */
  function drawGrid(root, side, onChange) {
    var grid = h("div", {
      class: "ld-draw", role: "group",
      "aria-label": t("Draw your own digit: each button is one pixel"),
      style: "grid-template-columns: repeat(" + side + ", 1fr)",
    });
    var cells = [], ink = new Float64Array(side * side);
    for (var i = 0; i < side * side; i++) {
      (function (i) {
        var b = h("button", {
          type: "button", class: "ld-pixel", "aria-pressed": "false",
          "data-pixel": String(i), tabindex: i === 0 ? "0" : "-1",
          "aria-label": fmt(t("pixel row {r}, column {c}"), {
            r: Math.floor(i / side) + 1, c: (i % side) + 1,
          }),
        });
        b.addEventListener("click", function () {
          ink[i] = ink[i] > 0 ? 0 : 1;
          paint();
          onChange(ink);
        });
        b.addEventListener("keydown", function (e) {
          var d = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -side, ArrowDown: side };
          if (!(e.key in d)) return;
          var j = i + d[e.key];
          if (j < 0 || j >= side * side) return;
          e.preventDefault();
          b.tabIndex = -1;
          cells[j].tabIndex = 0;
          cells[j].focus();
        });
        cells.push(b);
        grid.appendChild(b);
      })(i);
    }
    function paint() {
      cells.forEach(function (b, i) {
        b.setAttribute("aria-pressed", ink[i] > 0 ? "true" : "false");
        b.style.setProperty("--ld-ink", Math.min(1, ink[i]).toFixed(3));
      });
    }
    root.appendChild(grid);
    return {
      set: function (values) {
        for (var i = 0; i < ink.length; i++) ink[i] = values[i];
        paint();
      },
      ink: ink,
    };
  }

  function frame(root, title, alt) {
    root.textContent = "";
    var fig = h("div", { class: "ld-figure", role: "img", "aria-label": alt });
    var controls = h("div", { class: "ld-controls" });
    var summary = h("p", { class: "ld-summary", "aria-live": "polite" });
    root.appendChild(h("p", { class: "ld-title", text: title }));
    root.appendChild(controls);
    root.appendChild(fig);
    root.appendChild(summary);
    return { fig: fig, controls: controls, summary: summary };
  }

  /* ---- chapter 1: the filter bank ---- */
  // the input of a digit explorable: the test digits, then the reader's own
  function digitPicker(f, data) {
    var names = data.labels.map(function (c, i) {
      return fmt(t("test digit {i} (a {c})"), { i: i, c: c });
    });
    names.push(t("your drawing"));
    return select(f.controls, "input", t("input"), names, 0);
  }

  function filterBank(root, data) {
    var W = decode(data.W), X = decode(data.inputs), d = W.shape[0];
    var N = W.cols, side = data.side;
    var f = frame(root, t("Try it: the filter bank"), t(
      "Pick or draw a digit and scale it. The panels show the input, its raw " +
      "responses to every filter and their correlations with it: scaling the " +
      "input stretches the raw responses and leaves the correlations as they are."));
    var pick = digitPicker(f, data);
    var scale = range(f.controls, "scale", t("scale the input by"),
      data.scales.length, data.scales.indexOf(1), function (i) {
        return "× " + data.scales[i];
      });
    var pin = panel(t("input x"), 96, 96), praw = panel(t("raw responses x W"), 260, 110);
    var pcor = panel(t("correlations with the input"), 260, 110);
    [pin, praw, pcor].forEach(function (p) { f.fig.appendChild(p.box); });
    var draw = drawGrid(f.controls, side, function () {
      pick.value = String(X.shape[0]);
      update();
    });
    var groups = [], cls = data.filter_class;
    for (var j = 0; j < N; j++) {
      if (!j || cls[j] !== cls[j - 1]) groups.push({ start: j, size: 0, label: String(cls[j]) });
      groups[groups.length - 1].size++;
    }
    // the columns of W, one filter per column, as contiguous arrays
    var filters = [];
    for (j = 0; j < N; j++) {
      var col = new Float64Array(d);
      for (var i = 0; i < d; i++) col[i] = W.v[i * N + j];
      var m = 0;
      for (i = 0; i < d; i++) m += col[i] / d;
      var c2 = new Float64Array(d);
      for (i = 0; i < d; i++) c2[i] = col[i] - m;
      var nn = norm(c2);
      for (i = 0; i < d; i++) c2[i] /= nn;
      filters.push({ w: col, c: c2 });
    }
    function update() {
      var k = +pick.value, sc = data.scales[+scale.value];
      var base = k < X.shape[0] ? row(X, k) : draw.ink;
      if (k < X.shape[0]) draw.set(base);
      var x = new Float64Array(d), mean = 0;
      for (var i = 0; i < d; i++) { x[i] = sc * base[i]; mean += x[i] / d; }
      var xc = new Float64Array(d);
      for (i = 0; i < d; i++) xc[i] = x[i] - mean;
      var xn = norm(xc);
      var raw = new Float64Array(N), corr = new Float64Array(N);
      for (var j = 0; j < N; j++) {
        raw[j] = dot(x, filters[j].w);
        corr[j] = xn > 0 ? dot(xc, filters[j].c) / xn : 0;
      }
      image(pin, x, side, 0, Math.max(1, sc));
      line(praw, raw, groups);
      line(pcor, corr, groups);
      var ra = argmax(raw), ca = argmax(corr);
      root.ldState = {
        raw_max: raw[ra], raw_argmax: ra, corr_max: corr[ca], corr_argmax: ca,
        raw_at: data.probes.map(function (p) { return raw[p]; }),
        corr_at: data.probes.map(function (p) { return corr[p]; }),
        raw: list(raw), corr: list(corr),
      };
      f.summary.textContent = fmt(t(
        "Strongest raw response {r} (a filter of class {rc}); strongest " +
        "correlation {c} (a filter of class {cc})."), {
        r: num(raw[ra]), rc: cls[ra], c: num(corr[ca]), cc: cls[ca],
      });
    }
    pick.addEventListener("change", update);
    scale.addEventListener("input", update);
    update();
  }

  /* ---- chapter 2: the MLP as a lookup ---- */
  function mlpLookup(root, data) {
    var W1 = decode(data.W1), b1 = decode(data.b1).v, W2 = decode(data.W2);
    var b2 = decode(data.b2).v, X = decode(data.inputs);
    var d = W1.shape[0], N = W1.cols, C = W2.cols, side = data.side;
    var f = frame(root, t("Try it: the MLP reads its values"), t(
      "Pick or draw a digit. The panels show its key, one weight per hidden " +
      "unit, what each unit adds to the ten class scores (its value row times " +
      "its key weight) and the scores, their sum plus the bias."));
    var pick = digitPicker(f, data);
    var draw = drawGrid(f.controls, side, function () {
      pick.value = String(X.shape[0]);
      update();
    });
    var pin = panel(t("input x"), 96, 96);
    var pkey = panel(t("key h = ReLU(x W₁ + b₁)"), 180, 110);
    var pcon = panel(t("what each unit adds: h_j W₂[j, :]"), 170, 110);
    var pout = panel(t("class scores y = h W₂ + b₂"), 150, 110);
    [pin, pkey, pcon, pout].forEach(function (p) { f.fig.appendChild(p.box); });
    var classes = [];
    for (var c = 0; c < C; c++) classes.push(String(c));
    function update() {
      var k = +pick.value;
      var x = k < X.shape[0] ? row(X, k) : draw.ink;
      if (k < X.shape[0]) draw.set(x);
      var key = new Float64Array(N);
      for (var j = 0; j < N; j++) {
        var z = b1[j];
        for (var i = 0; i < d; i++) z += x[i] * W1.v[i * N + j];
        key[j] = Math.max(0, z);
      }
      var scores = lookup(key, W2);
      for (c = 0; c < C; c++) scores[c] += b2[c];
      var pred = argmax(scores);
      // what each unit adds: the image of h_j W2[j, :] as a unit × class map
      clear(pcon.svg);
      var big = 1e-12;
      for (j = 0; j < N; j++)
        for (c = 0; c < C; c++) big = Math.max(big, Math.abs(key[j] * W2.v[j * C + c]));
      var cw = pcon.w / C, ch = pcon.h / N;
      for (j = 0; j < N; j++)
        for (c = 0; c < C; c++) {
          var v = key[j] * W2.v[j * C + c];
          s("rect", {
            x: c * cw, y: j * ch, width: cw + 0.3, height: ch + 0.3,
            class: v >= 0 ? "ld-pos" : "ld-neg",
            "fill-opacity": (Math.abs(v) / big).toFixed(3),
          }, pcon.svg);
        }
      s("rect", { x: 0, y: 0, width: pcon.w, height: pcon.h, class: "ld-frame" }, pcon.svg);
      image(pin, x, side, 0, 1);
      bars(pkey, key);
      bars(pout, scores, { highlight: pred, labels: classes });
      var active = 0;
      for (j = 0; j < N; j++) if (key[j] > 0) active++;
      root.ldState = {
        key: list(key), scores: list(scores), predicted: pred, active: active,
      };
      f.summary.textContent = fmt(t(
        "{a} of {n} units are active; the highest score is class {p}."),
        { a: active, n: N, p: pred });
    }
    pick.addEventListener("change", update);
    update();
  }

  /* ---- chapter 3: the attention map, and mixing through layers ---- */
  function attentionMixing(root, data) {
    var Q = decode(data.q), K = decode(data.k), L = Q.shape[0], D = Q.cols;
    var f = frame(root, t("Try it: the attention map"), t(
      "Set the sharpness β, the causal mask and the window. The panels show " +
      "the map as a matrix and as a graph of who reads whom, and how much of " +
      "the chosen position's own content is left after each layer, with and " +
      "without the residual connection."));
    var beta = range(f.controls, "beta", t("sharpness β (times 1/√d)"),
      data.betas.length, data.betas.indexOf(1), function (i) {
        return String(data.betas[i]);
      });
    var causal = checkbox(f.controls, "causal", t("causal mask: read only earlier positions"), false);
    var wopts = [];
    for (var w = 1; w <= L; w++) wopts.push(String(w));
    var win = range(f.controls, "window", t("window width"), L + 1, L, function (i) {
      return i === 0 ? "1" : String(i);
    });
    win.min = 1;
    var posNames = [];
    for (var p = 0; p < L; p++) posNames.push(String(p));
    var pos = select(f.controls, "position", t("follow position"), posNames, data.position);
    var pmat = panel(t("the map A (row: who reads)"), 140, 140);
    var pgraph = panel(t("the same map as a graph"), 250, 140);
    var pmix = panel(t("own share left after n = 1, 2, … layers: pure attention (orange), with the residual (blue)"), 200, 140);
    [pmat, pgraph, pmix].forEach(function (q) { f.fig.appendChild(q.box); });
    function update() {
      var b = data.betas[+beta.value], ww = +win.value, cz = causal.checked;
      var t0 = +pos.value, scale = b / Math.sqrt(D);
      var A = new Float64Array(L * L);
      for (var i = 0; i < L; i++) {
        var sc = new Float64Array(L);
        for (var j = 0; j < L; j++) {
          var ok = Math.abs(i - j) < ww && (!cz || j <= i);
          sc[j] = ok ? dot(row(Q, i), row(K, j)) : -Infinity;
        }
        A.set(softmax(sc, scale), i * L);
      }
      matrix(pmat, A, L, t0);
      // graph: positions on a line, arcs from each source s to reader i
      clear(pgraph.svg);
      var gx = function (i) { return 12 + (i * (pgraph.w - 24)) / (L - 1); };
      var gy = pgraph.h - 24;
      for (i = 0; i < L; i++)
        for (j = 0; j < L; j++) {
          var a = A[i * L + j];
          if (a < 0.02 || i === j) continue;
          var x1 = gx(j), x2 = gx(i), hgt = Math.min(gy - 6, Math.abs(x2 - x1) * 0.6);
          s("path", {
            d: "M" + x1 + "," + gy + " Q" + (x1 + x2) / 2 + "," + (gy - 2 * hgt) + " " + x2 + "," + gy,
            class: i === t0 ? "ld-arc ld-hi" : "ld-arc",
            "stroke-width": (0.4 + 3 * a).toFixed(2),
            "stroke-opacity": (i === t0 ? 0.3 + 0.7 * a : 0.1 + 0.4 * a).toFixed(3),
          }, pgraph.svg);
        }
      for (i = 0; i < L; i++) {
        s("circle", {
          cx: gx(i), cy: gy, r: 3 + 5 * A[i * L + i],
          class: i === t0 ? "ld-node ld-hi" : "ld-node",
        }, pgraph.svg);
        s("text", { x: gx(i), y: pgraph.h - 6, "text-anchor": "middle", class: "ld-tick", text: String(i) }, pgraph.svg);
      }
      // mixing: powers of A and of (I + A)/2
      var n = data.layers, R = new Float64Array(L * L);
      for (i = 0; i < L * L; i++) R[i] = 0.5 * A[i];
      for (i = 0; i < L; i++) R[i * L + i] += 0.5;
      var st = { own_pure: [], own_residual: [], delta_pure: [], delta_residual: [] };
      var P = A, PR = R;
      for (var k = 1; k <= n; k++) {
        if (k > 1) { P = matmul(P, A, L); PR = matmul(PR, R, L); }
        st.own_pure.push(P[t0 * L + t0]);
        st.own_residual.push(PR[t0 * L + t0]);
        st.delta_pure.push(dobrushin(P, L));
        st.delta_residual.push(dobrushin(PR, L));
      }
      clear(pmix.svg);
      var bw = (pmix.w - 10) / n, top = 12, hh = pmix.h - 28;
      for (k = 0; k < n; k++) {
        [["own_pure", "ld-bar ld-c2"], ["own_residual", "ld-bar"]].forEach(function (e, m) {
          var v = st[e[0]][k];
          s("rect", {
            x: 6 + k * bw + m * bw * 0.42, y: top + hh * (1 - v), width: bw * 0.4,
            height: Math.max(hh * v, 0.5), class: e[1],
          }, pmix.svg);
        });
        s("text", { x: 6 + (k + 0.4) * bw, y: pmix.h - 4, "text-anchor": "middle", class: "ld-tick", text: String(k + 1) }, pmix.svg);
      }
      s("line", { x1: 0, x2: pmix.w, y1: top + hh, y2: top + hh, class: "ld-axis" }, pmix.svg);
      s("text", { x: 2, y: 10, class: "ld-tick", text: "1" }, pmix.svg);
      st.map = [];
      for (i = 0; i < L; i++) st.map.push(list(A.subarray(i * L, (i + 1) * L)));
      root.ldState = st;
      f.summary.textContent = fmt(t(
        "After {n} layers position {t} keeps {p} of its own content in pure " +
        "attention and {r} with the residual; the rows differ by at most {dp} " +
        "and {dr} (δ)."), {
        n: n, t: t0, p: num(st.own_pure[n - 1]), r: num(st.own_residual[n - 1]),
        dp: num(st.delta_pure[n - 1]), dr: num(st.delta_residual[n - 1]),
      });
    }
    [beta, win].forEach(function (e) { e.addEventListener("input", update); });
    [causal, pos].forEach(function (e) { e.addEventListener("change", update); });
    update();
  }

  /* ---- chapter 4: hard and soft keys ---- */
  function hardSoft(root, data) {
    var S = decode(data.scores), V = decode(data.values), n = S.shape[0];
    var side = data.side, betas = data.betas.concat([Infinity]);
    var f = frame(root, t("Try it: the β slider"), t(
      "Move β and pick a query. The panels show the key over the ten entries " +
      "and the picture it reads: flat and blurred, the mean of all values, at " +
      "small β; one-hot and exactly the stored entry, a dict lookup, at β = ∞."));
    var beta = range(f.controls, "beta", t("inverse temperature β"), betas.length,
      Math.floor(data.betas.length / 2), function (i) { return num(betas[i], 3); });
    var query = select(f.controls, "query", t("query: the address of"), data.names, data.query);
    var pkey = panel(t("key w = softmax(β s) over the entries (the query's own in orange)"), 250, 110);
    var pans = panel(t("answer w V"), 110, 110), pval = panel(t("stored value"), 110, 110);
    [pkey, pans, pval].forEach(function (p) { f.fig.appendChild(p.box); });
    var mean = new Float64Array(V.cols), vmax = max(V.v);
    for (var i = 0; i < n; i++)
      for (var j = 0; j < V.cols; j++) mean[j] += V.v[i * V.cols + j] / n;
    function update() {
      var b = betas[+beta.value], q = +query.value;
      var key = softmax(row(S, q), b), ans = lookup(key, V), own = row(V, q);
      var diff = new Float64Array(V.cols), dm = new Float64Array(V.cols);
      for (var j = 0; j < V.cols; j++) { diff[j] = ans[j] - own[j]; dm[j] = ans[j] - mean[j]; }
      bars(pkey, key, { max: 1, highlight: q, labels: data.names.map(function (_, i) { return String(i); }) });
      image(pans, ans, side, 0, vmax);
      image(pval, own, side, 0, vmax);
      root.ldState = {
        key: list(key), answer: list(ans), error: norm(diff) / norm(own), to_mean: norm(dm),
      };
      f.summary.textContent = fmt(t(
        "β = {b}: the key puts {w} on the right entry; the answer is {e} away " +
        "from it (relative error) and {m} from the mean of all values."), {
        b: num(b, 3), w: num(key[q]), e: num(root.ldState.error), m: num(root.ldState.to_mean),
      });
    }
    beta.addEventListener("input", update);
    query.addEventListener("change", update);
    update();
  }

  /* ---- Beyond: Hopfield retrieval ---- */
  function hopfield(root, data) {
    var X = bits(data.bits), d = X.cols, side = data.side;
    var f = frame(root, t("Try it: one attention step recalls a pattern"), t(
      "Choose how many patterns are stored, how many bits of pattern 0 are " +
      "flipped, and β. The panels show the stored pattern, the damaged query, " +
      "what one attention step returns and how many of its bits are wrong."));
    var count = range(f.controls, "count", t("stored patterns P"), data.counts.length, 4,
      function (i) { return String(data.counts[i]); });
    var flip = range(f.controls, "flip", t("bits flipped"), 11, 2, function (i) {
      return Math.round(100 * i * data.flip_step) + " %";
    });
    var beta = range(f.controls, "beta", t("β"), data.betas.length, data.betas.length - 1,
      function (i) { return String(data.betas[i]); });
    var pst = panel(t("stored pattern"), 96, 96), pq = panel(t("query"), 96, 96);
    var pa = panel(t("one attention step"), 96, 96), pk = panel(t("key over the first 60 stored patterns (pattern 0 in orange)"), 240, 96);
    [pst, pq, pa, pk].forEach(function (p) { f.fig.appendChild(p.box); });
    function update() {
      var P = data.counts[+count.value], fl = Math.round(+flip.value * data.flip_step * d);
      var b = data.betas[+beta.value], target = row(X, 0), query = Float64Array.from(target);
      for (var i = 0; i < fl; i++) query[data.order[i]] *= -1;
      var sc = new Float64Array(P);
      for (i = 0; i < P; i++) sc[i] = dot(query, row(X, i));
      var key = softmax(sc, b);
      var read = lookup(key, { v: X.v, cols: d });
      var ans = new Float64Array(d), wq = 0, wa = 0;
      for (i = 0; i < d; i++) {
        ans[i] = read[i] >= 0 ? 1 : -1;
        if (query[i] !== target[i]) wq++;
        if (ans[i] !== target[i]) wa++;
      }
      image(pst, target, side, -1, 1);
      image(pq, query, side, -1, 1);
      image(pa, ans, side, -1, 1);
      bars(pk, key.length > 60 ? key.subarray(0, 60) : key, { max: 1, highlight: 0 });
      root.ldState = {
        key_own: key[0], wrong_query: wq, wrong_answer: wa, read: list(read), key: list(key),
      };
      f.summary.textContent = fmt(t(
        "{P} patterns stored, {q} bits of the query wrong: the key puts {w} " +
        "on the right pattern and the answer has {a} wrong bits."),
        { P: P, q: wq, w: num(key[0], 3), a: wa });
    }
    [count, flip, beta].forEach(function (e) { e.addEventListener("input", update); });
    update();
  }

  var KINDS = {
    filter_bank: filterBank,
    mlp_lookup: mlpLookup,
    attention_mixing: attentionMixing,
    hard_soft: hardSoft,
    hopfield: hopfield,
  };

  function boot() {
    var all = document.querySelectorAll(".ld-explorable:not(.ld-ready)");
    Array.prototype.forEach.call(all, function (root) {
      var script = root.querySelector("script.ld-data");
      if (!script) return;
      var payload = JSON.parse(script.textContent);
      var draw = KINDS[payload.kind];
      if (!draw) return;
      root.ldChecks = payload.checks;
      var body = h("div", { class: "ld-body" });
      root.appendChild(body);
      draw(body, payload.data);
      root.ldState = body.ldState;
      // keep root.ldState current: controls update body.ldState
      Object.defineProperty(root, "ldState", {
        get: function () { return body.ldState; }, configurable: true,
      });
      root.classList.add("ld-ready");
    });
  }

  window.LDExplore = {
    version: VERSION,
    boot: boot,
    t: t,
    read: function (el) { return el.ldState; },
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", boot);
  } else {
    boot();
  }
})();
