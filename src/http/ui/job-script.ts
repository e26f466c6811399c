// The job page's script, served by the dashboard itself (no bundler, nothing from elsewhere). It follows the job
// feed with EventSource: a node's vote, run start and result update its row and the counts at once; when the job
// itself moves (started, quorum reached, finished, or only a summary is left), or a node event does not say the
// node's new status, it fetches the panel again. A node never moves back a stage on the page: a panel can be
// older than events already shown (the server may answer from a rendering up to a moment old), so the latest
// event of each node is applied again over every fetched panel.
import { NODE_STATUS_AFTER_RUN, NODE_STATUS_AFTER_VOTE } from '../../api/job-feed.js';
import { JOB_STATUSES, NODE_JOB_STAGE, NODE_JOB_STATUSES, isFinished } from '../../push/job-states.js';
import { UI } from './ui-env.js';

export const JOB_SCRIPT_PATH = `${UI}/assets/job-live.js`;

const FINISHED = JOB_STATUSES.filter(isFinished);

export const JOB_SCRIPT = `'use strict';
(function () {
  var ORDER = ${JSON.stringify(NODE_JOB_STATUSES)};
  var FINISHED = ${JSON.stringify(FINISHED)};
  var AFTER_VOTE = ${JSON.stringify(NODE_STATUS_AFTER_VOTE)};
  var AFTER_RUN = ${JSON.stringify(NODE_STATUS_AFTER_RUN)};
  var STAGE = ${JSON.stringify(NODE_JOB_STAGE)};
  var ORDER_SET = {};
  ORDER.forEach(function (s) { ORDER_SET[s] = true; });
  var live = document.getElementById('live');
  if (!live || typeof EventSource !== 'function') return;

  function panel() { return document.getElementById('job-panel'); }
  function finished() { var p = panel(); return !!p && FINISHED.indexOf(p.dataset.jobStatus) >= 0; }
  function say(text, on) { live.textContent = text; live.className = on ? 'live on' : 'live'; }
  if (finished()) { say('finished', false); return; }

  function label(status) { return status.split('_').join(' '); }
  function badge(status, text) {
    var b = document.createElement('span');
    b.className = 'st st-' + status;
    b.textContent = text;
    return b;
  }
  function shortDate(at) {
    var d = new Date(at);
    return isNaN(d.getTime()) ? '' : d.toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
  }
  // The shown panel's rows by node, and its counts by status: kept as events move nodes, built again for each
  // fetched panel, so that an event costs the same in a job of 3 nodes and of 10,000.
  var rows = null;
  var counts = null;
  function index() {
    rows = Object.create(null);
    counts = {};
    document.querySelectorAll('#job-nodes tr[data-node]').forEach(function (row) {
      rows[row.dataset.node] = row;
      var status = row.querySelector('td.node-status').dataset.status;
      counts[status] = (counts[status] || 0) + 1;
    });
  }
  function rowOf(node) {
    if (rows === null) index();
    return rows[node] || null;
  }
  function drawCounts() {
    var box = document.getElementById('node-counts');
    if (!box) return;
    box.replaceChildren.apply(box, ORDER.filter(function (s) { return counts[s]; }).map(function (s) {
      var b = badge(s, counts[s] + ' ' + label(s));
      b.dataset.count = s;
      return b;
    }));
  }
  var latest = Object.create(null); // node -> its last event's { status, at }
  function showNode(row, status, at) {
    var cell = row.querySelector('td.node-status');
    var was = cell.dataset.status;
    if (STAGE[status] < STAGE[was]) return;
    counts[was] -= 1;
    counts[status] = (counts[status] || 0) + 1;
    cell.dataset.status = status;
    var b = badge(status, label(status));
    b.dataset.status = status;
    cell.replaceChildren(b);
    if (at) row.querySelector('td.node-since').textContent = shortDate(at);
  }
  function setNode(node, status, at) {
    var row = rowOf(node);
    if (!row || !Object.prototype.hasOwnProperty.call(ORDER_SET, status)) return refresh();
    latest[node] = { status: status, at: at };
    showNode(row, status, at);
    drawCounts();
  }
  function reapply() {
    index();
    for (var node in latest) {
      var row = rows[node];
      if (row) showNode(row, latest[node].status, latest[node].at);
    }
    drawCounts();
  }

  var source = new EventSource(live.dataset.events);
  var fetching = false;
  var again = false;
  function done() { source.close(); say('finished', false); }
  // The whole panel, when the job itself moved. An event that comes meanwhile fetches it once more, so an
  // answer older than that event never has the last word.
  function refresh() {
    if (fetching) { again = true; return; }
    fetching = true;
    fetch(live.dataset.panel, { credentials: 'same-origin', headers: { Accept: 'text/html' } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var t = document.createElement('template');
        t.innerHTML = html;
        var next = t.content.firstElementChild;
        if (next && panel()) {
          panel().replaceWith(next);
          reapply();
        }
      })
      .catch(function () {})
      .then(function () {
        fetching = false;
        if (again) { again = false; refresh(); }
        else if (finished()) done();
      });
  }
  function on(type, handle) {
    source.addEventListener(type, function (e) {
      var data;
      try { data = JSON.parse(e.data); } catch (err) { return; }
      if (fetching) again = true;
      handle(data || {});
    });
  }
  source.onopen = function () { say('live', true); };
  source.onerror = function () { if (!finished()) say('reconnecting', false); };
  var lookup = function (table, key) { return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : ''; };
  on('quorum_vote', function (d) { setNode(d.node, lookup(AFTER_VOTE, d.status), d.timestamp); });
  on('run_start', function (d) { setNode(d.node, 'running', d.timestamp); });
  on('run_complete', function (d) { setNode(d.node, lookup(AFTER_RUN, d.status), d.timestamp); });
  ['start', 'quorum_succeeded', 'wave_start', 'wave_end', 'job_complete', 'summary'].forEach(function (type) {
    on(type, refresh);
  });
})();
`;
