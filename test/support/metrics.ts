// Reads a metrics listener the way Prometheus does: GET /metrics, then the text format parsed into samples and
// the metric names it exports.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  status: number;
  contentType: string | null;
  text: string;
  samples: Sample[];
  /** Every name a query may use: sample names, and each declared family with its histogram or summary series. */
  names: Set<string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const TYPE = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/;

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url);
  const text = await res.text();
  const samples: Sample[] = [];
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const declared = TYPE.exec(line);
    if (declared) {
      const [, name = '', type] = declared;
      names.add(name);
      if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
      if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const [, name = '', labelText = '', value = ''] = m;
    const labels: Record<string, string> = {};
    for (const [, k = '', v = ''] of labelText.matchAll(LABEL)) labels[k] = v.replace(/\\(.)/g, '$1');
    samples.push({ name, labels, value: Number(value) });
    names.add(name);
  }
  return { status: res.status, contentType: res.headers.get('content-type'), text, samples, names };
}

/** The samples of `name` whose labels include `labels`. */
export function samplesOf(s: Scrape, name: string, labels: Record<string, string> = {}): Sample[] {
  return s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
}

/** The one sample of `name` with exactly these labels' values among its own, or undefined. */
export function valueOf(s: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samplesOf(s, name, labels);
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} names ${found.length} samples`);
  return found[0]?.value;
}
