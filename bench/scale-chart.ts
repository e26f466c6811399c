// Draws bench/scale.svg from bench/scale-results.json (written by bench/scale.ts): POST to complete and server
// CPU against fleet size, one line per store, medians of the runs with the tester's default two loops of GETs.
// Plain SVG, no dependency.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ScaleRow } from './scale.js';
import { median } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const rows = (JSON.parse(readFileSync(join(here, 'scale-results.json'), 'utf8')) as ScaleRow[]).filter(
  (r) => (r.rest_concurrency ?? 2) === 2,
);
const sizes = [...new Set(rows.map((r) => r.nodes))].sort((a, b) => a - b);
const STORES = [
  { store: 'file', colour: '#1f77b4' },
  { store: 'redis', colour: '#d62728' },
] as const;

const W = 420;
const H = 260;
const PAD = { left: 56, right: 16, top: 30, bottom: 40 };

function panel(x0: number, title: string, unit: string, pick: (r: ScaleRow) => number | null): string {
  const series = STORES.map(({ store, colour }) => ({
    store,
    colour,
    points: sizes.flatMap((n) => {
      const v = rows
        .filter((r) => r.store === store && r.nodes === n)
        .map(pick)
        .filter((x): x is number => x !== null)
        .sort((a, b) => a - b);
      return v.length === 0 ? [] : [{ n, v: median(v) }];
    }),
  }));
  const maxV = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.v))) * 1.1;
  const maxN = Math.max(...sizes);
  const x = (n: number) => x0 + PAD.left + (n / maxN) * (W - PAD.left - PAD.right);
  const y = (v: number) => PAD.top + (1 - v / maxV) * (H - PAD.top - PAD.bottom);
  const parts = [
    `<text x="${x0 + W / 2}" y="18" text-anchor="middle" font-size="13">${title}</text>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(maxN)}" y2="${y(0)}" stroke="#444"/>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(0)}" y2="${y(maxV)}" stroke="#444"/>`,
    `<text x="${x0 + 12}" y="${PAD.top - 8}" font-size="10">${unit}</text>`,
    `<text x="${x0 + W / 2}" y="${H - 6}" text-anchor="middle" font-size="10">nodes in the job</text>`,
  ];
  for (const n of sizes)
    parts.push(`<text x="${x(n)}" y="${y(0) + 14}" text-anchor="middle" font-size="10">${n}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (maxV / 4) * i;
    parts.push(`<text x="${x(0) - 4}" y="${y(v) + 3}" text-anchor="end" font-size="10">${Math.round(v)}</text>`);
  }
  for (const s of series) {
    const path = s.points.map((p) => `${x(p.n)},${y(p.v)}`).join(' ');
    parts.push(`<polyline points="${path}" fill="none" stroke="${s.colour}" stroke-width="2"/>`);
    for (const p of s.points) parts.push(`<circle cx="${x(p.n)}" cy="${y(p.v)}" r="3" fill="${s.colour}"/>`);
  }
  return parts.join('\n');
}

const legend = STORES.map(
  ({ store, colour }, i) =>
    `<rect x="${W * 2 - 120}" y="${40 + i * 16}" width="10" height="10" fill="${colour}"/><text x="${W * 2 - 105}" y="${49 + i * 16}" font-size="11">${store} store</text>`,
).join('\n');
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W * 2}" height="${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
${panel(0, 'POST to complete (median)', 'ms', (r) => r.post_to_complete_ms)}
${panel(W, 'Server CPU during the run (median)', '% of one core', (r) => r.server_cpu_pct)}
${legend}
</svg>
`;
writeFileSync(join(here, 'scale.svg'), svg);
console.log(`wrote ${join(here, 'scale.svg')} from ${rows.length} runs`);
