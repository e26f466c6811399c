// The web dashboard in a real browser (Debian's Chromium, driven by playwright-core): infra-server and three real
// push-jobs-client nodes as child processes, an operator who signs in with a password, sees the nodes up, starts a
// job through the form and watches every node succeed on the job page without reloading it, starts a rollout through
// the form and watches its waves, and pauses and resumes a schedule; a member without push write access gets no start
// form and no schedule buttons, and is refused when posting anyway. Screenshots of the job page are saved.
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { chromium, type Browser, type Page } from 'playwright-core';
import { until } from '../support/deadline.js';
import { startNodeFleet, waitForNodes } from '../support/node-fleet.js';
import { startServerProcess } from '../support/server-process.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where to copy the screenshot of the job page in mid-run besides the test's folder (docs/dashboard.png). */
const SCREENSHOT_COPY = process.env.DASHBOARD_SCREENSHOT;
const PASSWORD = 'dashboard-pass-1';
const NODES = ['node1', 'node2', 'node3'];

const noBrowser = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
if (noBrowser === undefined) {
  await dashboardTests();
} else if (process.env.INFRA_REQUIRE_BROWSER === '1') {
  // CI sets this (.ci/run): there, a browser test that did not run is a failure, not a skip.
  t.fail(`${noBrowser}; INFRA_REQUIRE_BROWSER=1 requires the dashboard's browser test to run`);
} else {
  // A skipped subtest, so that tap's summary counts it (`skip: 1`) and prints the reason.
  t.test('the dashboard in a real browser', { skip: noBrowser }, () => undefined);
}

async function dashboardTests(): Promise<void> {
  const server = await startServerProcess(t, {
    settings: {
      server_name: '127.0.0.1',
      queue_listen_address: 'tcp://127.0.0.1',
      heartbeat_interval: 200,
      voting_timeout: 10,
    },
  });
  const pivotal = await server.client('pivotal');
  const admin = await server.client('admin');
  const scratch = await mkdtemp(join(tmpdir(), 'infra-dashboard-'));
  t.teardown(() => rm(scratch, { recursive: true, force: true }));
  // The command waits for a file named after its job and node, so the job page is open while the nodes run and
  // must follow them live, one by one.
  const go = (job: string, node: string) => writeFile(join(scratch, `go-${job}-${node}`), '');
  const nodes = await startNodeFleet(t, {
    serverUrl: server.url,
    validationKey: join(server.dataDir, 'default-validator.pem'),
    dir: join(scratch, 'nodes'),
    names: NODES,
    whitelist: () => ({
      deploy: `while [ ! -e "${scratch}/go-$PUSH_JOB_ID-$PUSH_NODE_NAME" ]; do sleep 0.1; done; echo deployed`,
    }),
  });

  // Setup runs before the subtests, so it throws instead of asserting.
  const must = async (what: string, status: number, res: Promise<{ status: number; body: unknown }>) => {
    const r = await res;
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  for (const name of ['olga', 'rick']) {
    const user = { username: name, email: `${name}@example.com`, display_name: name, password: PASSWORD };
    await must(`create ${name}`, 201, pivotal.request('POST', '/users', user));
    await must(
      `${name} joins default`,
      201,
      pivotal.request('POST', '/organizations/default/users', { username: name }),
    );
  }
  // olga may start jobs (admins); rick is a member only.
  const admins = { actors: { users: ['admin', 'olga'] } };
  await must('olga joins admins', 200, pivotal.request('PUT', '/organizations/default/groups/admins', admins));
  await waitForNodes(admin, nodes, 'available');

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const ui = (path: string) => new URL(path, server.url).toString();

  /** Each node's status cell on the job page, in node order. */
  const statuses = (page: Page) =>
    page.locator('#job-nodes td.node-status').evaluateAll((tds) => tds.map((td) => td.textContent?.trim() ?? ''));
  const everyNode = (page: Page, status: string) =>
    until(
      `every node's cell to say ${status}`,
      // A table not drawn yet has no cell, and every() of nothing is true.
      async () => {
        const cells = await statuses(page);
        return cells.length === NODES.length && cells.every((s) => s === status) ? true : undefined;
      },
      30_000,
    );

  async function startJob(page: Page): Promise<string> {
    await page.goto(ui('/ui/orgs/default/jobs'));
    await page.fill('#command', 'deploy');
    await page.fill('#search', 'name:node*');
    await page.fill('#quorum', '100%');
    await page.check('#capture');
    await page.click('[data-testid=start-job] button[type=submit]');
    await page.waitForURL(/\/ui\/orgs\/default\/jobs\/[0-9a-f]{32}$/);
    return page.url().split('/').pop() ?? '';
  }

  async function signIn(page: Page, username: string, password: string): Promise<void> {
    await page.goto(ui('/ui/orgs'));
    await page.fill('#username', username);
    await page.fill('#password', password);
    await page.click('button[type=submit]');
  }

  t.test('a wrong password is refused with a message that gives nothing away', async (t) => {
    const page = await browser.newPage();
    t.teardown(() => page.close());
    await signIn(page, 'olga', 'not-the-password');
    t.equal(await page.textContent('.flash.error'), 'Wrong user name or password.');
    t.match(page.url(), /\/ui\/sign-in$/);
  });

  t.test('an operator signs in, starts a job and watches every node succeed without reloading', async (t) => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 760 } });
    t.teardown(() => context.close());
    const page = await context.newPage();
    await signIn(page, 'olga', PASSWORD);
    await page.waitForURL(ui('/ui/orgs'));
    await page.click('a[href="/ui/orgs/default/nodes"]');

    const cards = page.locator('[data-testid=node-grid] .card');
    t.same(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-node'))), NODES, 'one card a node');
    for (const name of NODES) {
      const card = page.locator(`.card[data-node="${name}"]`);
      t.equal(await card.locator('[data-testid=node-status]').textContent(), 'up', `${name} is up`);
      t.equal(await card.locator('[data-testid=node-availability]').textContent(), 'available');
      t.match(await card.textContent(), /last heartbeat: \d{4}-\d\d-\d\d [\d:]+ UTC \(\d+ s ago\)/);
    }

    const refused = await context.request.post(ui('/ui/orgs/default/jobs'), {
      form: { command: 'deploy', nodes: 'node1' },
      maxRedirects: 0,
    });
    t.equal(refused.status(), 403, 'a POST without the CSRF token is refused');

    const id = await startJob(page);
    let loads = 0;
    page.on('load', () => loads++);
    // A mark in the page's global scope: a reload would lose it.
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
    await everyNode(page, 'running');
    t.same(await statuses(page), ['running', 'running', 'running'], 'the nodes run');
    t.equal(await page.textContent('#live'), 'live', 'the page follows the job feed');

    await Promise.all([go(id, 'node1'), go(id, 'node2')]);
    await until(
      'node1 and node2 to succeed on the page',
      async () => ((await statuses(page)).join() === 'succeeded,succeeded,running' ? true : undefined),
      30_000,
    );
    t.equal(await page.textContent('[data-count=succeeded]'), '2 succeeded', 'the counts follow');
    t.equal(await page.textContent('[data-count=running]'), '1 running');
    const midRun = join(scratch, 'dashboard-job-running.png');
    await page.screenshot({ path: midRun, fullPage: true });
    if (SCREENSHOT_COPY !== undefined) await copyFile(midRun, SCREENSHOT_COPY);

    await go(id, 'node3');
    await everyNode(page, 'succeeded');
    await page.waitForSelector('#job-status [data-status=complete]');
    t.same(await statuses(page), ['succeeded', 'succeeded', 'succeeded'], 'every node succeeded');
    t.equal(await page.textContent('[data-count=succeeded]'), '3 succeeded');
    t.equal(await page.evaluate(() => 'notReloaded' in globalThis), true, 'the page was never reloaded');
    t.equal(loads, 0);
    t.equal(await page.locator('text=Abort job').count(), 0, 'a finished job has no abort button');
    const stdout = await page.getAttribute('tr[data-node=node2] a:text("stdout")', 'href');
    t.equal(await (await context.request.get(ui(stdout ?? ''))).text(), 'deployed\n', "node2's captured output");

    const shot = join(scratch, 'dashboard-job.png');
    await page.screenshot({ path: shot, fullPage: true });
    t.ok(existsSync(shot) && existsSync(midRun), `screenshots saved as ${midRun} and ${shot}`);
  });

  t.test('the abort button stops a running job, and the page shows it', async (t) => {
    const page = await browser.newPage();
    t.teardown(() => page.close());
    await signIn(page, 'olga', PASSWORD);
    await page.waitForURL(ui('/ui/orgs'));
    await waitForNodes(admin, nodes, 'available');
    const id = await startJob(page);
    await everyNode(page, 'running');
    await page.click('text=Abort job');
    await page.waitForSelector('#job-status [data-status=aborted]');
    t.same(await statuses(page), ['aborted', 'aborted', 'aborted']);
    t.equal(await page.textContent('[data-count=aborted]'), '3 aborted');
    const job = await admin.request('GET', `/organizations/default/pushy/jobs/${id}`);
    t.match(job.body, { status: 'aborted' }, 'the API agrees');
  });

  t.test('a member without push write access sees no start form and is refused when posting', async (t) => {
    const context = await browser.newContext();
    t.teardown(() => context.close());
    const page = await context.newPage();
    await signIn(page, 'rick', PASSWORD);
    await page.waitForURL(ui('/ui/orgs'));
    await page.goto(ui('/ui/orgs/default/jobs'));
    t.equal(await page.locator('[data-testid=job-list] tbody tr').count(), 2, 'the job list shows the jobs');
    t.equal(await page.locator('[data-testid=start-job]').count(), 0, 'no start form');
    const csrf = await page.getAttribute('input[name=_csrf]', 'value');
    const posted = await context.request.post(ui('/ui/orgs/default/jobs'), {
      form: { _csrf: csrf ?? '', command: 'deploy', nodes: 'node1' },
      maxRedirects: 0,
    });
    t.equal(posted.status(), 403);
    t.match(await posted.text(), /missing create permission/);
    const jobs = await admin.request('GET', '/organizations/default/pushy/jobs');
    t.equal(Array.isArray(jobs.body) ? jobs.body.length : -1, 2, 'no job was started');
  });

  t.test('a rollout started through the form shows its waves, and they follow the job without a reload', async (t) => {
    const page = await browser.newPage();
    t.teardown(() => page.close());
    await signIn(page, 'olga', PASSWORD);
    await page.waitForURL(ui('/ui/orgs'));
    await waitForNodes(admin, nodes, 'available');
    await page.goto(ui('/ui/orgs/default/jobs'));
    await page.fill('#command', 'deploy');
    await page.fill('#nodes', NODES.join(' '));
    await page.fill('#waves', '0,100%');
    await page.click('[data-testid=start-job] button[type=submit]');
    t.match(await page.textContent('.flash.error'), /^Waves are sizes separated by commas/, 'a wave of 0 is named');
    t.equal(await page.inputValue('#waves'), '0,100%', 'the form keeps what was typed');
    const before = await admin.request('GET', '/organizations/default/pushy/jobs');

    await page.fill('#waves', '1, 100%');
    await page.fill('#max_failures', '0');
    await page.click('[data-testid=start-job] button[type=submit]');
    await page.waitForURL(/\/ui\/orgs\/default\/jobs\/[0-9a-f]{32}$/);
    const id = page.url().split('/').pop() ?? '';
    const job = await admin.request('GET', `/organizations/default/pushy/jobs/${id}`);
    t.match(job.body, { rollout: { max_failures: 0, pause: 0 } }, 'the API shows the rollout the form asked for');
    t.equal(Array.isArray(before.body) ? before.body.length : -1, 2, 'the refused form started no job');
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
    const waveStatuses = () =>
      page.locator('#job-waves td.wave-status').evaluateAll((tds) => tds.map((td) => td.dataset.status ?? ''));
    const waves = (want: string) =>
      until(`the waves to be ${want}`, async () => ((await waveStatuses()).join() === want ? true : undefined), 30_000);
    await waves('running,pending');
    t.equal(await page.textContent('#job-waves tr[data-wave="1"] td.wave-nodes'), 'node1', 'the canary by name');
    t.equal(await page.textContent('#job-waves tr[data-wave="2"] td.wave-nodes'), 'node2, node3');
    t.equal(await page.textContent('[data-count=waiting]'), '2 waiting', 'the later wave waits');
    t.match(await page.textContent('#rollout-summary'), /^Wave 1 of 2 · 0 failures of max_failures 0 · pause 0 s/);

    await go(id, 'node1');
    await waves('complete,running');
    t.match(await page.textContent('#rollout-summary'), /^Wave 2 of 2 /, 'the page follows the next wave');
    await Promise.all([go(id, 'node2'), go(id, 'node3')]);
    await waves('complete,complete');
    await page.waitForSelector('#job-status [data-status=complete]');
    t.equal(await page.evaluate(() => 'notReloaded' in globalThis), true, 'the page was never reloaded');
    await page.screenshot({ path: join(scratch, 'dashboard-rollout.png'), fullPage: true });
  });

  t.test('schedules show with their next run, and pause and resume from the page for those who may', async (t) => {
    const created = await admin.request('POST', '/organizations/default/pushy/schedules', {
      name: 'new-year',
      job: { command: 'deploy', nodes: NODES, rollout: { waves: [1, '100%'] } },
      cron: '30 4 1 1 *',
      time_zone: 'Europe/Paris',
    });
    t.equal(created.status, 201);
    const context = await browser.newContext();
    t.teardown(() => context.close());
    const page = await context.newPage();
    await signIn(page, 'olga', PASSWORD);
    await page.waitForURL(ui('/ui/orgs'));
    await page.click('a[href="/ui/orgs/default/jobs"]');
    await page.click('header.top a:text("Schedules")');
    const row = page.locator('tr[data-schedule=new-year]');
    t.match(await row.textContent(), /deploy on 3 nodes, waves 1, 100%.*30 4 1 1 \* Europe\/Paris/);
    t.match(await row.locator('.schedule-next').textContent(), /^\d{4}-01-01 03:30:00 UTC$/, 'its next run, in UTC');

    await row.locator('button:text("Pause")').click();
    await page.waitForURL(ui('/ui/orgs/default/schedules'));
    t.equal(await row.locator('.schedule-next').textContent(), 'paused');
    const paused = await admin.request('GET', '/organizations/default/pushy/schedules/new-year');
    t.match(paused.body, { paused: true, next_run_at: null }, 'the API agrees');

    const member = await browser.newContext();
    t.teardown(() => member.close());
    const rickPage = await member.newPage();
    await signIn(rickPage, 'rick', PASSWORD);
    await rickPage.waitForURL(ui('/ui/orgs'));
    await rickPage.goto(ui('/ui/orgs/default/schedules'));
    t.equal(await rickPage.locator('tr[data-schedule=new-year] .schedule-next').textContent(), 'paused');
    t.equal(await rickPage.locator('[data-testid=schedule-list] button').count(), 0, 'a member gets no buttons');
    const csrf = await rickPage.getAttribute('input[name=_csrf]', 'value');
    const refused = await member.request.post(ui('/ui/orgs/default/schedules/new-year/resume'), {
      form: { _csrf: csrf ?? '' },
      maxRedirects: 0,
    });
    t.equal(refused.status(), 403, 'and is refused when posting anyway');

    await row.locator('button:text("Resume")').click();
    await page.waitForURL(ui('/ui/orgs/default/schedules'));
    t.match(await row.locator('.schedule-next').textContent(), /^\d{4}-01-01 03:30:00 UTC$/, 'resumed');
    const resumed = await admin.request('GET', '/organizations/default/pushy/schedules/new-year');
    t.match(resumed.body, { paused: false }, 'the API agrees');
  });
}
