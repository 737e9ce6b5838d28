// chart.js — a stacked bar chart over time on a canvas, with an HTML legend
// and the same figures in a table for screen readers and tests. No
// dependency: the console's only chart is counts per bucket.
'use strict';

window.StackedChart = (function () {
  const palette = ['#1f5fbf', '#d1495b', '#2e933c', '#edae49', '#7b4fa0', '#00798c', '#8f5d3a', '#e07bb4', '#5b6475', '#a3b18a'];

  // draw fills container with a chart of layers ({label, values}) over
  // times (Date, one per bucket), stacked in the order given.
  function draw(container, times, layers, opts) {
    opts = opts || {};
    container.replaceChildren();
    container.classList.add('chart');
    let total = 0;
    for (const l of layers) for (const v of l.values) total += v;
    container.dataset.total = String(total);
    const canvas = document.createElement('canvas');
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', (opts.title || 'chart') + ': ' + total + ' in all');
    container.append(canvas);
    const legend = document.createElement('ul');
    legend.className = 'legend';
    layers.forEach((l, i) => {
      const li = document.createElement('li');
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = palette[i % palette.length];
      li.append(sw, document.createTextNode(l.label));
      legend.append(li);
    });
    container.append(legend);
    container.append(dataTable(times, layers, opts.title));
    const paint = () => render(canvas, times, layers);
    paint();
    if (typeof ResizeObserver === 'function') new ResizeObserver(paint).observe(canvas);
  }

  function render(canvas, times, layers) {
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 600, h = canvas.clientHeight || 220;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const left = 56, bottom = 22, top = 8, right = 8;
    const n = times.length;
    const sums = times.map((_, i) => layers.reduce((s, l) => s + l.values[i], 0));
    const max = Math.max(1, ...sums);
    const scale = niceMax(max);
    const ph = h - top - bottom, pw = w - left - right;
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#5b6475';
    g.strokeStyle = '#e3e6ec';
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let k = 0; k <= 4; k++) {
      const v = scale * k / 4, y = top + ph - ph * k / 4;
      g.beginPath(); g.moveTo(left, y); g.lineTo(w - right, y); g.stroke();
      g.fillText(v.toLocaleString('en-US'), left - 4, y);
    }
    if (n === 0) return;
    const bw = pw / n;
    layers.forEach((l, li) => {
      g.fillStyle = palette[li % palette.length];
      for (let i = 0; i < n; i++) {
        const below = layers.slice(0, li).reduce((s, o) => s + o.values[i], 0);
        const y0 = top + ph - ph * below / scale;
        const hh = ph * l.values[i] / scale;
        if (hh > 0) g.fillRect(left + i * bw + bw * 0.1, y0 - hh, Math.max(1, bw * 0.8), hh);
      }
    });
    g.fillStyle = '#5b6475';
    g.textAlign = 'center';
    g.textBaseline = 'top';
    const every = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(pw / 90))));
    for (let i = 0; i < n; i += every) {
      g.fillText(label(times[i], times), left + i * bw + bw / 2, h - bottom + 5);
    }
  }

  // niceMax is the top of the axis: four ticks of 1, 2 or 5 times a power
  // of ten (2.5 from 10 up), whole counts, at or above v.
  function niceMax(v) {
    const raw = v / 4, p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
    for (const m of (p >= 10 ? [1, 2, 2.5, 5, 10] : [1, 2, 5, 10])) if (m * p >= raw) return 4 * m * p;
    return 40 * p;
  }

  function label(t, times) {
    const iso = t.toISOString();
    const step = times.length > 1 ? times[1] - times[0] : 0;
    return step >= 86400000 ? iso.slice(5, 10) : iso.slice(5, 16).replace('T', ' ');
  }

  function dataTable(times, layers, title) {
    const d = document.createElement('details');
    const s = document.createElement('summary');
    s.textContent = 'Figures of the chart';
    d.append(s);
    const t = document.createElement('table');
    const cap = document.createElement('caption');
    cap.className = 'visually-hidden';
    cap.textContent = title || 'chart';
    t.append(cap);
    const hr = document.createElement('tr');
    for (const h of ['Bucket (UTC)', ...layers.map(l => l.label)]) {
      const th = document.createElement('th');
      th.textContent = h;
      hr.append(th);
    }
    t.append(hr);
    times.forEach((tm, i) => {
      const tr = document.createElement('tr');
      const td = document.createElement('td');
      td.textContent = tm.toISOString().slice(0, 16).replace('T', ' ');
      tr.append(td);
      for (const l of layers) {
        const c = document.createElement('td');
        c.className = 'num';
        c.textContent = l.values[i].toLocaleString('en-US');
        tr.append(c);
      }
      t.append(tr);
    });
    d.append(t);
    return d;
  }

  return { draw };
})();
