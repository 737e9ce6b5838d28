// app.js — the mcpdrift console: a page per report, read from the API of
// the same origin. The URL holds every filter (shareable, the back button
// works); with tokens, the token is kept in sessionStorage for the tab and
// sent as a Bearer header, never in a URL.
'use strict';

(function () {
  const DASH = '—';
  const TOKEN_KEY = 'mcpdrift.token';
  const FILTERS = ['from', 'to', 'service', 'environment', 'client', 'exclude_client'];
  const DEFAULT_FROM = '-7d';
  const main = document.getElementById('main');
  let generation = 0; // a render superseded by a newer one draws nothing

  // ---- DOM helpers: text only, never HTML from data.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  const num = v => (v === null || v === undefined) ? DASH : Number(v).toLocaleString('en-US');
  const pct = v => (v === null || v === undefined) ? DASH : (v * 100).toFixed(2) + '%';
  // ms is a lag in milliseconds, in the unit that reads best.
  function ms(v) {
    if (v === null || v === undefined) return DASH;
    if (v < 1000) return Math.round(v) + ' ms';
    if (v < 60000) return (v / 1000).toFixed(1) + ' s';
    if (v < 3600000) return (v / 60000).toFixed(1) + ' min';
    return (v / 3600000).toFixed(1) + ' h';
  }
  const text = v => (v === null || v === undefined || v === '') ? DASH : String(v);
  // change says the change between a row's two revisions from the
  // registry: its class, then its summary; a dash when the registry does
  // not know both revisions (class and summary null).
  const change = (cls, summary) => summary === null || summary === undefined ? DASH : (cls || 'none') + ': ' + summary;
  function age(s) {
    if (s === null || s === undefined) return DASH;
    if (s >= 86400) return (s / 86400).toFixed(1) + ' d';
    if (s >= 3600) return (s / 3600).toFixed(1) + ' h';
    return s + ' s';
  }
  function when(iso) {
    if (!iso) return DASH;
    return el('time', { datetime: iso }, iso.slice(0, 19).replace('T', ' ') + ' UTC');
  }
  const list = xs => (!xs || xs.length === 0) ? DASH : xs.join(', ');
  const clients = cs => (!cs || cs.length === 0) ? DASH : cs.map(c => c.client).join(', ');

  // table builds a table of rows under columns [{title, value(row),
  // num?, key?}]; a cell with a key carries data-k for the tests.
  function table(caption, columns, rows) {
    const t = el('table', {}, el('caption', { class: 'visually-hidden', text: caption }));
    t.append(el('tr', {}, columns.map(c => el('th', { class: c.num ? 'num' : null, scope: 'col', text: c.title }))));
    for (const r of rows) {
      t.append(el('tr', {}, columns.map(c => el('td', { class: c.num ? 'num' : null, 'data-k': c.key }, c.value(r)))));
    }
    return t;
  }

  // ---- URL state.
  function state() {
    const u = new URL(location.href);
    return { path: decodeURIComponent(u.pathname), q: u.searchParams };
  }
  // filterParams are the URL's filters as the API reads them.
  function filterParams(q, keys) {
    const p = new URLSearchParams();
    for (const k of keys || FILTERS) {
      if (k === 'exclude_client') {
        for (const c of (q.get(k) || '').split(',').map(s => s.trim()).filter(Boolean)) p.append(k, c);
      } else if (k === 'from') {
        p.set('from', q.get('from') || DEFAULT_FROM);
      } else if (q.get(k)) {
        p.set(k, q.get(k));
      }
    }
    return p;
  }
  function go(href, replace) {
    if (replace) history.replaceState(null, '', href);
    else history.pushState(null, '', href);
    route();
  }
  // withQuery keeps the filters of the current URL on a link to path.
  function withQuery(path, extra) {
    const q = new URLSearchParams();
    const cur = state().q;
    for (const k of FILTERS) if (cur.get(k)) q.set(k, cur.get(k));
    for (const [k, v] of Object.entries(extra || {})) if (v) q.set(k, v);
    const s = q.toString();
    return path + (s ? '?' + s : '');
  }
  const link = (path, label, extra) => el('a', { href: withQuery(path, extra) }, label);

  // ---- API access.
  class APIError extends Error {
    constructor(status, detail, param) { super(detail); this.status = status; this.param = param || ''; }
  }
  async function api(path, params, init) {
    init = init || {};
    const headers = Object.assign({ Accept: 'application/json' }, init.headers || {});
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    const url = path + (params && params.toString() ? '?' + params.toString() : '');
    const res = await fetch(url, Object.assign({}, init, { headers, credentials: 'omit', cache: 'no-store' }));
    if (!res.ok) {
      let detail = res.status + ' ' + res.statusText, param = '';
      try { const p = await res.json(); if (p.detail) detail = p.detail; param = p.parameter; } catch (e) { /* not a problem document */ }
      throw new APIError(res.status, detail, param);
    }
    if ((headers.Accept || '').startsWith('application/json')) return res.json();
    return res.text();
  }

  // ---- states.
  const loading = () => el('p', { class: 'state loading', role: 'status', text: 'Loading…' });
  const empty = what => el('p', { class: 'state empty', text: what });
  function failure(err) {
    if (err instanceof APIError && err.status === 401) {
      askToken(err.message);
      // The dialog closed with Escape opens again from here.
      return el('p', { class: 'state error', role: 'alert' }, 'A token is needed: ' + err.message + ' ',
        el('button', { type: 'button', onclick: () => askToken(err.message) }, 'Enter a token'));
    }
    if (err instanceof APIError && err.status === 403) return el('p', { class: 'state error forbidden', role: 'alert', text: 'Not allowed with this token: ' + err.message });
    const where = err instanceof APIError && err.param ? ' in ' + err.param : '';
    return el('p', { class: 'state error', role: 'alert', text: 'Error' + where + ': ' + err.message });
  }
  // section shows loading in a slot, then what fill builds from the API's
  // answer, or the error.
  function section(slot, promise, fill, gen) {
    slot.replaceChildren(loading());
    return promise.then(v => { if (gen === generation) slot.replaceChildren(fill(v)); },
      err => { if (gen === generation) slot.replaceChildren(failure(err)); });
  }

  // ---- token.
  const dialog = document.getElementById('login');
  function askToken(why) {
    document.getElementById('login-error').textContent = sessionStorage.getItem(TOKEN_KEY) ? 'The token was refused: ' + why : '';
    if (!dialog.open) dialog.showModal();
  }
  document.getElementById('login-form').addEventListener('submit', e => {
    const v = new FormData(e.target).get('token').trim();
    if (!v) { e.preventDefault(); return; }
    sessionStorage.setItem(TOKEN_KEY, v);
    e.target.reset();
    document.getElementById('signout').hidden = false;
    route();
  });
  document.getElementById('signout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    document.getElementById('signout').hidden = true;
    askToken('');
  });
  document.getElementById('signout').hidden = !sessionStorage.getItem(TOKEN_KEY);

  // ---- filters form.
  const form = document.getElementById('filters');
  function syncForm(q) {
    for (const k of FILTERS) form.elements[k].value = q.get(k) || (k === 'from' ? DEFAULT_FROM : '');
    form.elements.to.placeholder = 'now';
  }
  form.addEventListener('submit', e => {
    e.preventDefault();
    const { path, q } = state();
    const n = new URLSearchParams();
    for (const k of FILTERS) {
      const v = form.elements[k].value.trim();
      if (v && !(k === 'from' && v === DEFAULT_FROM)) n.set(k, v);
    }
    for (const k of ['run', 'session', 'request_id', 'old', 'drift_server', 'drift', 'max_calls']) if (q.get(k)) n.set(k, q.get(k));
    const s = n.toString();
    go(encodePath(path) + (s ? '?' + s : ''));
  });
  function encodePath(p) { return p.split('/').map(encodeURIComponent).join('/'); }

  // Links inside the console navigate without a reload.
  document.addEventListener('click', e => {
    const a = e.target.closest('a');
    if (!a || a.target || a.hasAttribute('download') || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    const u = new URL(a.href, location.href);
    if (u.origin !== location.origin || u.pathname.startsWith('/api/')) return;
    e.preventDefault();
    if (u.pathname.split('/')[1] !== location.pathname.split('/')[1]) {
      // Another page keeps the filters the form holds.
      const q = new URLSearchParams(u.search);
      go(u.pathname + (q.toString() ? '?' + q : ''));
    } else {
      go(u.pathname + u.search);
    }
  });
  window.addEventListener('popstate', route);

  // ---- pages.
  const pages = [
    [/^\/(adapters)?$/, adaptersPage],
    [/^\/adapters\/([^/]+)$/, adapterPage],
    [/^\/tools$/, toolsPage],
    [/^\/tools\/([^/]+)$/, toolPage],
    [/^\/violations$/, violationsPage],
    [/^\/audit$/, auditPage],
    [/^\/check$/, checkPage],
  ];
  function route() {
    const gen = ++generation;
    const { path, q } = state();
    syncForm(q);
    const section0 = path.split('/')[1] || 'adapters';
    for (const a of document.querySelectorAll('nav a')) {
      if (a.dataset.nav === section0) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
      a.href = withQuery('/' + a.dataset.nav);
    }
    const raw = location.pathname;
    for (const [re, page] of pages) {
      const m = raw.match(re);
      if (m) {
        main.replaceChildren();
        document.title = 'mcpdrift';
        page(q, gen, m[1] && page !== adaptersPage ? decodeURIComponent(m[1]) : undefined);
        return;
      }
    }
    main.replaceChildren(el('h1', { text: 'Page not found' }), empty('The console has no page at ' + path + '.'));
  }
  function title(t) { document.title = t + ' · mcpdrift'; main.append(el('h1', { text: t })); }
  function slot() { const d = el('div', { class: 'slot' }); main.append(d); return d; }

  // Adapters: every adapter and its verdict.
  function adaptersPage(q, gen) {
    title('Adapters');
    section(slot(), api('/api/v1/reports/adapter-retirement', filterParams(q)), body => {
      if (body.rows.length === 0) return empty('No adapter is declared or used in this window.');
      return table('Adapters', [
        { title: 'Adapter', key: 'adapter_id', value: r => link('/adapters/' + encodeURIComponent(r.adapter_id), r.adapter_id) },
        { title: 'Tool', key: 'tool', value: r => r.tool },
        { title: 'Verdict', key: 'verdict', value: r => el('span', { class: 'verdict verdict-' + r.verdict, text: r.verdict }) },
        { title: 'Calls', key: 'calls', num: true, value: r => num(r.calls) },
        { title: 'Share', key: 'share', num: true, value: r => r.tool_calls === 0 ? DASH : pct(r.share) },
        { title: 'Last seen', key: 'last_seen', value: r => when(r.last_seen) },
        { title: 'Blocking clients', key: 'blocking_clients', value: r => clients(r.blocking_clients) },
        { title: 'Reason', key: 'reason', value: r => r.reason },
      ], body.rows);
    }, gen);
  }

  // gateCommand is the mcpdrift gate command line of the same decision.
  function gateCommand(id, q) {
    const quote = s => /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
    const parts = ['mcpdrift', 'gate', 'adapter', quote(id)];
    const from = q.get('from') || DEFAULT_FROM;
    if (/^-\d+[smhdw]$/.test(from) && !q.get('to')) parts.push('-window', from.slice(1));
    if (q.get('service')) parts.push('-service', quote(q.get('service')));
    if (q.get('environment')) parts.push('-environment', quote(q.get('environment')));
    for (const c of filterParams(q, ['exclude_client']).getAll('exclude_client')) parts.push('-exclude-client', quote(c));
    return parts.join(' ');
  }

  // Adapter: its figures, calls per day, the clients in its way, the
  // what-if and the gate.
  function adapterPage(q, gen, id) {
    title('Adapter ' + id);
    const facts = slot();
    const p = filterParams(q);
    p.set('adapter', id);
    p.set('top_clients', '100');
    section(facts, api('/api/v1/reports/adapter-retirement', p), body => {
      const r = body.rows[0];
      if (!r) return empty('No adapter ' + id + ' in this window.');
      const dl = el('dl', { class: 'facts' });
      const fact = (k, label, v) => dl.append(el('dt', { text: label }), el('dd', { 'data-k': k }, v));
      fact('verdict', 'Verdict', el('span', { class: 'verdict verdict-' + r.verdict, text: r.verdict }));
      fact('reason', 'Reason', r.reason);
      fact('tool', 'Tool', link('/tools/' + encodeURIComponent(r.tool), r.tool));
      fact('revisions', 'Revisions', el('span', {}, revCell(r.revision_from), ' → ', revCell(r.revision_to)));
      fact('change', 'Bridges', change(r.registry_change_class, r.change));
      fact('calls', 'Calls through it', num(r.calls));
      fact('share', 'Share of the tool\'s calls', r.tool_calls === 0 ? DASH : pct(r.share));
      fact('would_be_rejected', 'What-if: rejected without it', num(r.would_be_rejected));
      fact('sessions', 'Sessions', num(r.sessions));
      fact('max_session_age_s', 'Oldest session', age(r.max_session_age_s));
      fact('max_privilege', 'Highest privilege', text(r.max_privilege));
      fact('last_seen', 'Last seen', when(r.last_seen));
      fact('window_end', 'Declared window end', when(r.window_end));
      const cmd = gateCommand(id, q);
      const pre = el('pre', { class: 'cmd', 'data-k': 'gate' }, cmd);
      const status = el('span', { role: 'status' });
      const copy = el('button', { type: 'button', onclick: () => {
        const done = () => { status.textContent = 'Copied.'; };
        const select = () => { const s = getSelection(); s.selectAllChildren(pre); status.textContent = 'Selected: press Ctrl+C.'; };
        if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(cmd).then(done, select); else select();
      } }, 'Copy');
      return el('div', {}, dl,
        el('h2', { text: 'Clients in its way' }),
        r.blocking_clients.length === 0 ? empty('None.') : table('Blocking clients', [
          { title: 'Client', key: 'client', value: c => c.client },
          { title: 'Calls', key: 'calls', num: true, value: c => num(c.calls) },
          { title: 'Oldest session', key: 'max_session_age_s', num: true, value: c => age(c.max_session_age_s) },
          { title: 'Highest privilege', key: 'max_privilege', value: c => text(c.max_privilege) },
        ], r.blocking_clients),
        el('h2', { text: 'Gate in a release pipeline' }), pre, copy, status);
    }, gen);
    main.append(el('h2', { text: 'Calls through it per day' }));
    const chart = slot();
    chart.id = 'chart';
    const sp = filterParams(q);
    sp.set('step', '1d');
    sp.set('group_by', 'adapter');
    section(chart, api('/api/v1/reports/adapter-retirement/series', sp), body => {
      const rows = body.rows.filter(r => r.adapter === id);
      const times = [...new Set(rows.map(r => r.time))];
      if (rows.every(r => r.calls === 0)) return empty('No call through it in this window.');
      const div = el('div');
      const by = new Map(rows.map(r => [r.time, r]));
      StackedChart.draw(div, times.map(t => new Date(t)), [
        { label: 'normalised (would be rejected)', values: times.map(t => by.get(t).would_be_rejected) },
        { label: 'other calls through it', values: times.map(t => by.get(t).calls - by.get(t).would_be_rejected) },
      ], { title: 'Calls through ' + id + ' per day' });
      return div;
    }, gen);
  }

  function toolsPage(q, gen) {
    title('Tools');
    section(slot(), api('/api/v1/tools', filterParams(q)), body => {
      if (body.rows.length === 0) return empty('No tool was called in this window.');
      return table('Tools', [
        { title: 'Tool', key: 'tool', value: r => link('/tools/' + encodeURIComponent(r.tool), r.tool) },
        { title: 'Client revisions', key: 'client_revisions', value: r => revList(r.client_revisions) },
        { title: 'Server revisions', key: 'server_revisions', value: r => revList(r.server_revisions) },
        { title: 'Adapters', key: 'adapters', value: r => list(r.adapters) },
        { title: 'Calls', key: 'calls', num: true, value: r => num(r.calls) },
        { title: 'First seen', key: 'first_seen', value: r => when(r.first_seen) },
        { title: 'Last seen', key: 'last_seen', value: r => when(r.last_seen) },
      ], body.rows);
    }, gen);
  }

  const revList = xs => (!xs || xs.length === 0) ? DASH : el('span', { 'data-full': xs.join(', ') }, xs.map(shortRev).join(', '));
  const OUTCOMES = ['current', 'normalized', 'rejected', 'removed', 'failed'];
  // shortRev is a revision as people quote a commit: a digest's first 12
  // characters; the whole one is in the title and data-full.
  const shortRev = v => v.length > 16 ? v.slice(0, 12) + '…' : v;
  const rev = v => v ? shortRev(v) : '(unknown)';
  const revCell = v => v ? el('code', { title: v, 'data-full': v }, shortRev(v)) : DASH;

  function toolPage(q, gen, tool) {
    title('Tool ' + tool);
    const p = filterParams(q);
    p.set('tool', tool);
    main.append(el('h2', { text: 'Calls by client revision → server revision and outcome' }));
    const chart = slot();
    chart.id = 'chart';
    const sp = new URLSearchParams(p);
    sp.set('group_by', 'revision_client,revision_server');
    section(chart, api('/api/v1/reports/stale-usage/series', sp), body => {
      const times = [...new Set(body.rows.map(r => r.time))];
      const layers = new Map();
      const index = new Map(times.map((t, i) => [t, i]));
      for (const r of body.rows) {
        for (const o of OUTCOMES) {
          if (!r[o]) continue;
          const k = rev(r.revision_client) + ' → ' + rev(r.revision_server) + ' ' + o;
          if (!layers.has(k)) layers.set(k, { label: k, values: times.map(() => 0) });
          layers.get(k).values[index.get(r.time)] += r[o];
        }
      }
      if (layers.size === 0) return empty('No call in this window.');
      const div = el('div');
      StackedChart.draw(div, times.map(t => new Date(t)), [...layers.values()], { title: 'Calls of ' + tool });
      return div;
    }, gen);
    main.append(el('h2', { text: 'Revisions' }));
    section(slot(), api('/api/v1/reports/stale-usage', p), body => {
      if (body.rows.length === 0) return empty('No call in this window.');
      return table('Revisions', [
        { title: 'Client revision', key: 'revision_client', value: r => revCell(r.revision_client) },
        { title: 'Server revision', key: 'revision_server', value: r => revCell(r.revision_server) },
        { title: 'Stale', key: 'stale', value: r => r.stale === null ? DASH : r.stale ? 'yes' : 'no' },
        { title: 'Change', key: 'change', value: r => change(r.change_class, r.change) },
        { title: 'Calls', key: 'calls', num: true, value: r => num(r.calls) },
        ...OUTCOMES.map(o => ({ title: o[0].toUpperCase() + o.slice(1), key: o, num: true, value: r => num(r[o]) })),
        { title: 'First seen', key: 'first_seen', value: r => when(r.first_seen) },
        { title: 'Last seen', key: 'last_seen', value: r => when(r.last_seen) },
      ], body.rows);
    }, gen);
    // The registry's history has no window: only the service and
    // environment filters apply.
    main.append(el('h2', { text: 'Advertised revisions' }));
    section(slot(), api('/api/v1/tools/' + encodeURIComponent(tool) + '/revisions', filterParams(q, ['service', 'environment'])), body => {
      const rows = body.histories.flatMap(h => h.revisions.map(r => Object.assign({ service: h.service, environment: h.environment }, r)));
      if (rows.length === 0) return empty('No service has advertised this tool to the registry.');
      return table('Advertised revisions', [
        { title: 'Service', key: 'service', value: r => text(r.service) },
        { title: 'Environment', key: 'environment', value: r => text(r.environment) },
        { title: 'Revision', key: 'revision', value: r => revCell(r.revision) },
        { title: 'Algorithm', key: 'algorithm', value: r => el('span', { title: r.algorithm_label, 'data-full': r.algorithm }, r.algorithm_label) },
        { title: 'First advertised', key: 'first_advertised', value: r => when(r.first_advertised) },
        { title: 'Last advertised', key: 'last_advertised', value: r => when(r.last_advertised) },
        // The list's cache hint: how long a client may keep a list that
        // holds the revision (ttlMs, SEP-2549), and for whom.
        { title: 'List TTL', key: 'list_ttl', value: r => r.list_ttl_ms ? el('span', { 'data-full': [r.list_ttl_ms, r.list_cache_scope].filter(Boolean).join(' ') }, ms(r.list_ttl_ms) + (r.list_cache_scope ? ' ' + r.list_cache_scope : '')) : DASH },
        { title: 'Change', key: 'change', value: r => r.change ? change(r.change.class, r.change.summary) : DASH },
      ], rows);
    }, gen);
    main.append(el('h2', { text: 'Rejections, repairs and amplification' }));
    section(slot(), api('/api/v1/reports/repairs', p), body => {
      if (body.rows.length === 0) return empty('No rejection or repair in this window.');
      return table('Repairs', [
        { title: 'Rejections', key: 'rejections', num: true, value: r => num(r.rejections) },
        { title: 'Stale rejections', key: 'stale_rejections', num: true, value: r => num(r.stale_rejections) },
        { title: 'Retries', key: 'retry_calls', num: true, value: r => num(r.retry_calls) },
        { title: 'Amplification', key: 'amplification', num: true, value: r => r.amplification === null ? DASH : r.amplification.toFixed(2) },
        { title: 'Refresh and retry', key: 'refresh_retries', num: true, value: r => num(r.refresh_retries) },
        { title: 'Model repairs', key: 'model_repairs', num: true, value: r => num(r.model_repairs) },
        { title: 'Human approvals', key: 'human_approvals', num: true, value: r => num(r.human_approvals) },
        { title: 'Abandons', key: 'abandons', num: true, value: r => num(r.abandons) },
      ], body.rows);
    }, gen);
    main.append(el('h2', { text: 'Propagation after list_changed' }));
    section(slot(), api('/api/v1/reports/propagation', p), body => {
      if (body.rows.length === 0) return empty('No list_changed notification reached a session in this window.');
      return table('Propagation', [
        { title: 'Notified sessions', key: 'notified_sessions', num: true, value: r => num(r.notified_sessions) },
        { title: 'Refreshed', key: 'refreshed_sessions', num: true, value: r => num(r.refreshed_sessions) },
        { title: 'Never refreshed', key: 'never_refreshed', num: true, value: r => num(r.never_refreshed) },
        { title: 'Lag p50', key: 'lag_p50_ms', num: true, value: r => ms(r.lag_p50_ms) },
        { title: 'Lag p95', key: 'lag_p95_ms', num: true, value: r => ms(r.lag_p95_ms) },
        { title: 'Lag max', key: 'lag_max_ms', num: true, value: r => ms(r.lag_max_ms) },
        { title: 'Stale calls after notice', key: 'stale_calls_after_notice', num: true, value: r => num(r.stale_calls_after_notice) },
      ], body.rows);
    }, gen);
  }

  // page is the rows per page: the URL's limit, 50 by default.
  const page = q => /^[1-9][0-9]{0,3}$/.test(q.get('limit') || '') ? q.get('limit') : '50';
  function violationsPage(q, gen) {
    title('Violations');
    const p = filterParams(q);
    p.set('limit', page(q));
    if (q.get('cursor')) p.set('cursor', q.get('cursor'));
    section(slot(), api('/api/v1/reports/violations', p), body => {
      const pager = el('nav', { class: 'pager', 'aria-label': 'Pages of violations' },
        q.get('cursor') ? link('/violations', 'First page', { limit: q.get('limit') }) : null,
        body.next ? link('/violations', 'Next page', { limit: q.get('limit'), cursor: body.next }) : null);
      if (body.rows.length === 0) return el('div', {}, empty('No safety violation in this window.'), pager);
      return el('div', {}, table('Violations', [
        { title: 'Time', key: 'time', value: r => when(r.time) },
        { title: 'Kind', key: 'kind', value: r => r.kind },
        { title: 'Tool', key: 'tool', value: r => link('/tools/' + encodeURIComponent(r.tool), r.tool) },
        { title: 'Client', key: 'client', value: r => r.client_name ? r.client_name + '@' + r.client_version : DASH },
        { title: 'Revisions', key: 'revisions', value: r => el('span', {}, revCell(r.revision_client), ' → ', revCell(r.revision_server)) },
        { title: 'Outcome', key: 'outcome', value: r => text(r.outcome) },
        { title: 'Session', key: 'session_id', value: r => r.session_id ? link('/audit', r.session_id, { session: r.session_id }) : DASH },
        { title: 'Detail', key: 'detail', value: r => text(r.detail) },
      ], body.rows), pager);
    }, gen);
  }

  function auditPage(q, gen) {
    title('Audit');
    const f = el('form', { class: 'filters', 'aria-label': 'Audit search' });
    for (const [k, label] of [['run', 'Run id'], ['session', 'Session id'], ['request_id', 'Request id']]) {
      f.append(el('label', {}, label, el('input', { name: k, value: q.get(k) || '', autocomplete: 'off' })));
    }
    f.append(el('button', { type: 'submit' }, 'Search'));
    f.addEventListener('submit', e => {
      e.preventDefault();
      const extra = {};
      for (const k of ['run', 'session', 'request_id']) extra[k] = f.elements[k].value.trim();
      go(withQuery('/audit', extra));
    });
    main.append(f);
    const p = filterParams(q);
    for (const k of ['run', 'session', 'request_id', 'cursor']) if (q.get(k)) p.set(k, q.get(k));
    p.set('limit', page(q));
    section(slot(), api('/api/v1/audit/calls', p), body => {
      const keep = { limit: q.get('limit') };
      for (const k of ['run', 'session', 'request_id']) keep[k] = q.get(k);
      const pager = el('nav', { class: 'pager', 'aria-label': 'Pages of calls' },
        q.get('cursor') ? link('/audit', 'First page', keep) : null,
        body.next ? link('/audit', 'Next page', Object.assign({ cursor: body.next }, keep)) : null);
      if (body.rows.length === 0) return el('div', {}, empty('No audited call matches.'), pager);
      return el('div', {}, table('Audited calls', [
        { title: 'Time', key: 'time', value: r => when(r.time) },
        { title: 'Tool', key: 'tool', value: r => r.tool },
        { title: 'Client', key: 'client', value: r => r.client_name ? r.client_name + '@' + r.client_version : DASH },
        { title: 'Run', key: 'run_id', value: r => text(r.run_id) },
        { title: 'Session', key: 'session_id', value: r => text(r.session_id) },
        { title: 'Request', key: 'request_id', value: r => text(r.request_id) },
        { title: 'Revisions', key: 'revisions', value: r => el('span', {}, revCell(r.revision_client), ' → ', revCell(r.revision_server)) },
        { title: 'Outcome', key: 'outcome', value: r => text(r.outcome) },
        { title: 'Approval', key: 'approval', value: r => text(r.approval) },
        { title: 'Arguments', key: 'args_raw', value: r => el('code', {}, text(r.args_raw)) },
      ], body.rows), pager);
    }, gen);
  }

  // checkPage compares a new tools/list result with an old one: pasted or
  // uploaded, or what a service advertises now, from the registry of
  // advertised definitions (GET deployed/services lists the services, the
  // check reads the list itself). Pasted lists stay in the page (they may
  // be large, and are nobody's business in a URL); the choice of the
  // deployed list is in the URL (old=deployed, service, environment),
  // the filters the check is weighed with as well.
  function checkPage(q, gen) {
    title('Release check');
    const f = el('form', { 'aria-label': 'Two tools/list results' });
    const side = (name, label) => {
      const ta = el('textarea', { name, 'aria-label': label + ' (JSON)', spellcheck: 'false', required: true });
      const file = el('input', { type: 'file', accept: '.json,application/json', 'aria-label': 'Upload the ' + label.toLowerCase() });
      file.addEventListener('change', () => { if (file.files[0]) file.files[0].text().then(t => { ta.value = t; }); });
      return el('div', {}, el('h2', { text: label }), ta, file);
    };
    const source = el('select', { name: 'source', 'aria-label': 'The old list' },
      el('option', { value: 'paste', text: 'Pasted or uploaded' }),
      el('option', { value: 'deployed', text: 'Deployed now (registry)' }));
    const pasted = side('old', 'Deployed tools/list');
    const picker = el('select', { name: 'deployed', 'aria-label': 'Service and environment' });
    const services = el('div', { class: 'slot' });
    const deployed = el('div', {}, el('h2', { text: 'Deployed now' }),
      el('label', { class: 'pick' }, 'Service · environment ', picker), services);
    f.append(el('label', { class: 'pick' }, 'Old list ', source),
      el('div', { class: 'cols' }, el('div', {}, pasted, deployed), side('new', 'New tools/list')),
      el('button', { type: 'submit' }, 'Check'));
    main.append(f);
    const out = slot();
    const envLabel = e => e === '' ? '(no environment)' : e;
    // pick puts the chosen service and environment in the URL and the
    // filters: the check is weighed by that service's calls.
    const pick = () => {
      const [service, environment] = picker.value ? JSON.parse(picker.value) : ['', ''];
      const u = new URL(location.href);
      u.searchParams.set('old', 'deployed');
      for (const [k, v] of [['service', service], ['environment', environment]]) {
        if (v) u.searchParams.set(k, v); else u.searchParams.delete(k);
        form.elements[k].value = v;
      }
      history.replaceState(null, '', u.pathname + u.search);
    };
    picker.addEventListener('change', pick);
    let listed = false;
    const listServices = () => {
      if (listed) return;
      listed = true;
      section(services, api('/api/v1/deployed/services'), body => {
        const cur = state().q;
        const want = JSON.stringify([cur.get('service') || '', cur.get('environment') || '']);
        for (const s of body.services) {
          const mid = s.mid_deploy.length ? ', mid-deploy' : '';
          picker.append(el('option', { value: JSON.stringify([s.service, s.environment]) },
            s.service + ' · ' + envLabel(s.environment) + ' (' + s.tools + ' tools' + mid + ')'));
        }
        // A service the URL names and the registry does not know stays
        // chosen: the check answers why it cannot take its list.
        if (cur.get('service') && ![...picker.options].some(o => o.value === want)) {
          picker.append(el('option', { value: want }, cur.get('service') + (cur.get('environment') ? ' · ' + cur.get('environment') : '') + ' (named by the link, not listed by the registry)'));
        }
        if ([...picker.options].some(o => o.value === want)) picker.value = want;
        pick();
        if (body.services.length === 0) return empty('No service has advertised its tools to this store (dev.mcpdrift.advertised, as otelschema/mcpgo emits it).');
        return table('Services', [
          { title: 'Service', key: 'service', value: s => s.service },
          { title: 'Environment', key: 'environment', value: s => envLabel(s.environment) },
          { title: 'Tools', key: 'tools', num: true, value: s => num(s.tools) },
          { title: 'Latest advertisement', key: 'at', value: s => when(s.at) },
          { title: 'Mid-deploy', key: 'mid_deploy', value: s => s.mid_deploy.length ? s.mid_deploy.map(m => m.tool + ' (' + m.revisions.join(', ') + ')').join('; ') : DASH },
        ], body.services);
      }, gen);
    };
    const show = () => {
      const dep = source.value === 'deployed';
      pasted.hidden = dep;
      deployed.hidden = !dep;
      f.elements.old.required = !dep;
      if (dep) listServices();
    };
    source.addEventListener('change', () => {
      if (source.value === 'deployed') {
        show();
        if (listed && picker.value) pick();
      } else {
        const u = new URL(location.href);
        u.searchParams.delete('old');
        history.replaceState(null, '', u.pathname + u.search);
        show();
      }
    });
    source.value = q.get('old') === 'deployed' ? 'deployed' : 'paste';
    show();
    const params = () => filterParams(state().q, ['from', 'to', 'service', 'environment', 'exclude_client']);
    const request = accept => {
      const body = {};
      try {
        if (source.value !== 'deployed') body.old = JSON.parse(f.elements.old.value);
        body.new = JSON.parse(f.elements.new.value);
      } catch (e) {
        return Promise.reject(new Error('each list must be JSON: ' + e.message));
      }
      return api('/api/v1/check', params(), { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: accept },
        body: JSON.stringify(body) });
    };
    f.addEventListener('submit', e => {
      e.preventDefault();
      section(out, request('application/json'), body => {
        const md = el('button', { type: 'button', onclick: () => {
          request('text/markdown').then(text => {
            const a = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'text/markdown' })), download: 'mcpdrift-check.md' });
            document.body.append(a); a.click(); a.remove();
          }, err => out.append(failure(err)));
        } }, 'Download Markdown');
        const d = body.deployed;
        return el('div', {},
          d ? el('p', { 'data-k': 'deployed' }, 'Old list: what ' + d.service + ' advertises now in ' + envLabel(d.environment) +
            ' (registry of advertised definitions, latest advertisement ', when(d.at), ').') : null,
          d && d.mid_deploy.length ? el('ul', { class: 'mid-deploy', 'aria-label': 'Mid-deploy' }, d.mid_deploy.map(m =>
            el('li', { 'data-k': 'mid_deploy', 'data-full': m.tool + ' ' + m.revisions.join(',') },
              el('strong', { text: 'Mid-deploy: ' }), m.tool + ' is advertised under revisions ' + m.revisions.join(', ') + ' at once; the check compares the newest.'))) : null,
          el('p', { 'data-k': 'pass', class: body.pass ? 'verdict verdict-ready' : 'verdict verdict-blocked', text: body.pass ? 'pass: every change is safe' : 'fail: some change needs a decision' }),
          table('Changes', [
            { title: 'Tool', key: 'tool', value: c => c.tool },
            { title: 'Status', key: 'status', value: c => c.status },
            { title: 'Class', key: 'class', value: c => text(c.class) },
            { title: 'Verdict', key: 'verdict', value: c => c.verdict },
            { title: 'Old revision', key: 'old_revision', value: c => revCell(c.old_revision) },
            { title: 'Calls on the old revision', key: 'calls', num: true, value: c => c.usage ? num(c.usage.calls) : DASH },
            { title: 'Calls without revision', key: 'unknown_calls', num: true, value: c => c.usage ? num(c.usage.unknown_calls) : DASH },
            { title: 'Reason', key: 'reason', value: c => c.reason },
          ], body.tools), md);
      }, gen);
    });
    driftSection(q, gen, source, f.elements.old);
  }

  // The verdicts that pass (drifttest.Verdict.Pass); any other fails.
  const DRIFT_PASS = new Set(['normalized', 'rejected', 'removed', 'current']);
  const driftFails = r => r.verdict && !DRIFT_PASS.has(r.verdict);
  // driftAnswer says what the server answered, as the CLI's table does.
  function driftAnswer(a) {
    if (!a) return 'not sent';
    if (a.error) return 'error: ' + a.error;
    if (a.is_error) return a.structured && a.structured.error_code ? a.structured.error_code : 'error: ' + (a.text || '');
    return 'success';
  }

  // driftSection runs the drift test (POST drifttest) against a running
  // MCP server with the old list of the release check: the pasted one, or
  // what the URL's service advertises now. It SENDS REAL CALLS, to hosts
  // the server's operator allowed; GET drifttest says whether this token
  // may, and the form stays off with the reason when not. The URL holds
  // the server, the calls per tool and what was last shown (drift=dry or
  // drift=run). A link re-runs a dry run (with the deployed list: a pasted
  // one is not in the URL) and never a real one: it says so, and waits for
  // the button.
  function driftSection(q, gen, source, oldArea) {
    const server = el('input', { type: 'url', name: 'drift_server', size: 40, required: true, autocomplete: 'off',
      placeholder: 'http://staging.internal:3000/mcp', 'aria-label': 'MCP server under test' });
    server.value = q.get('drift_server') || '';
    const calls = el('input', { type: 'number', name: 'max_calls', min: 1, 'aria-label': 'Calls per tool' });
    const dry = el('button', { type: 'submit', name: 'dry' }, 'Dry run');
    const run = el('button', { type: 'submit', name: 'run', class: 'danger' }, 'Run: send real calls');
    const controls = [server, calls, dry, run];
    for (const c of controls) c.disabled = true;
    const df = el('form', { class: 'drift', 'aria-label': 'Drift test' },
      el('label', { class: 'pick' }, 'MCP server ', server), ' ', el('label', { class: 'pick' }, 'Calls per tool ', calls), ' ', dry, ' ', run);
    const status = el('div', { class: 'slot' });
    const note = el('div', {});
    const results = el('div', { class: 'slot' });
    main.append(el('h2', { id: 'drift-title', text: 'Drift test against a running server' }),
      el('p', { class: 'warning', text: 'Sends real tools/call requests to the server you name, as agents that planned with the old list would: ' +
        'point it at a test or staging deployment. A dry run lists its tools and shows the calls without sending any.' }),
      status, df, note, results);

    const start = dryRun => {
      const cur = state().q;
      const body = { server: server.value.trim(), dry_run: dryRun };
      if (calls.value) body.max_calls = Number(calls.value);
      if (source.value === 'deployed') {
        body.deployed = { service: cur.get('service') || '', environment: cur.get('environment') || '' };
      } else {
        try {
          body.old = JSON.parse(oldArea.value);
        } catch (e) {
          results.replaceChildren(failure(new Error('the old list must be JSON: ' + e.message)));
          return;
        }
      }
      const u = new URL(location.href);
      u.searchParams.set('drift_server', body.server);
      u.searchParams.set('drift', dryRun ? 'dry' : 'run');
      if (calls.value) u.searchParams.set('max_calls', calls.value); else u.searchParams.delete('max_calls');
      history.replaceState(null, '', u.pathname + u.search);
      note.replaceChildren();
      section(results, api('/api/v1/drifttest', null, { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body) }), driftResults, gen);
    };
    df.addEventListener('submit', e => {
      e.preventDefault();
      start(!(e.submitter && e.submitter.name === 'run'));
    });

    section(status, api('/api/v1/drifttest'), s => {
      if (!s.enabled || !s.allowed) return el('p', { class: 'state note', 'data-k': 'drift_off', text: 'The drift test is off here: ' + s.detail + '.' });
      for (const c of controls) c.disabled = false;
      calls.max = s.max_calls_per_tool;
      calls.value = q.get('max_calls') || s.default_max_calls;
      const mode = q.get('drift');
      if (mode === 'run') {
        note.replaceChildren(el('p', { class: 'state note', 'data-k': 'drift_link', role: 'note',
          text: 'This link named a drift test that sends real calls: a link never starts one. Press “Run: send real calls” to send them.' }));
      } else if (mode === 'dry' && server.value && source.value === 'deployed') {
        start(true);
      } else if (mode === 'dry' && server.value) {
        note.replaceChildren(el('p', { class: 'state note', 'data-k': 'drift_link', role: 'note',
          text: 'Paste the old list, then press “Dry run”: a pasted list is not kept in the link.' }));
      }
      return el('p', { 'data-k': 'drift_hosts' }, 'This server may call ' + s.allow_hosts.join(', ') + '; at most ' + s.max_calls_per_tool +
        ' calls per tool, ' + s.timeout_s + ' s per test.');
    }, gen);
  }

  // driftResults shows a drift test's calls, failures first, each with
  // the server's answer and its verdict.
  function driftResults(body) {
    const r = body.report;
    const tools = new Set(r.results.map(x => x.tool)).size;
    let head, cls;
    if (r.dry_run) {
      head = 'dry run: ' + r.results.length + ' calls to ' + tools + ' tools of ' + r.server + ', none sent';
      cls = 'verdict';
    } else if (body.pass) {
      head = 'pass: every old call was adapted or rejected cleanly (' + r.results.length + ' calls to ' + tools + ' changed or removed tools)';
      cls = 'verdict verdict-ready';
    } else {
      head = 'fail: ' + body.failures + ' of ' + r.results.length + " old calls broke the seed's rules";
      cls = 'verdict verdict-blocked';
    }
    const rows = r.results.map((x, i) => Object.assign({ n: i }, x));
    rows.sort((a, b) => driftFails(b) - driftFails(a) || a.n - b.n);
    return el('div', {},
      el('p', { 'data-k': 'drift_pass', class: cls, text: head }),
      rows.length === 0 ? empty('No tool changed or was removed: nothing to send.') : table('Drift test', [
        { title: 'Tool', key: 'tool', value: x => x.tool },
        { title: 'Revisions', key: 'revisions', value: x => el('span', {}, revCell(x.old_revision), ' → ', x.new_revision ? revCell(x.new_revision) : 'removed') },
        { title: 'Client', key: 'pass', value: x => x.pass },
        { title: 'Arguments', key: 'arguments', value: x => {
          // Cut as the CLI's table cuts them; the whole in a tooltip.
          const full = JSON.stringify(x.arguments);
          return el('code', { title: full, 'data-full': full }, full.length > 120 ? full.slice(0, 120) + '…' : full);
        } },
        { title: 'Answer', key: 'answer', value: x => driftAnswer(x.answer) },
        { title: 'Verdict', key: 'verdict', value: x => x.verdict ? el('span', { class: 'verdict ' + (driftFails(x) ? 'verdict-blocked' : 'verdict-ready'), text: x.verdict }) : DASH },
        { title: 'Reason', key: 'reason', value: x => text(x.reason) },
      ], rows),
      r.unchanged.length ? el('p', { 'data-k': 'drift_unchanged' }, 'Unchanged, not called: ' + r.unchanged.join(', ') + '.') : null);
  }

  route();
})();
