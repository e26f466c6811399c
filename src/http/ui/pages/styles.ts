// The dashboard's one stylesheet, inlined into every page: readable tables, and one colour per status
// (`st-<status>`) for jobs, nodes in a job, and node availability.
const GREEN = ['succeeded', 'complete', 'up', 'available'];
const BLUE = ['running', 'voting', 'ready'];
const GREY = ['new', 'was_ready', 'aborted', 'waiting', 'pending', 'skipped', 'paused'];
const AMBER = ['nacked', 'unavailable'];
const RED = ['failed', 'crashed', 'down', 'quorum_failed', 'timed_out', 'max_failures_exceeded'];

const palette = (names: string[], fg: string, bg: string) =>
  `${names.map((n) => `.st-${n}`).join(',')}{color:${fg};background:${bg};border-color:${fg}33}`;

export const STYLESHEET = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}
a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
header.top{display:flex;align-items:center;gap:20px;padding:10px 24px;background:#24292f;color:#fff}
header.top a{color:#fff}header.top .brand{font-weight:700;font-size:17px}
header.top nav{display:flex;gap:16px;flex:1;align-items:center}header.top nav .org{padding:1px 10px;border-radius:6px;background:#ffffff22;font-weight:600}header.top nav a{opacity:.85}header.top nav a.here{opacity:1;font-weight:600}
header.top .who{display:flex;align-items:center;gap:10px;opacity:.9}
main{max-width:1180px;margin:24px auto;padding:0 24px}
h1{font-size:22px;margin:0 0 16px}h2{font-size:17px;margin:28px 0 10px}h2.first{margin-top:0}
.muted{color:#656d76}.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
.panel{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;margin-bottom:16px}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid #d0d7de;border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:8px 12px;border-bottom:1px solid #eaeef2;vertical-align:top}
th{background:#f6f8fa;font-weight:600;font-size:13px;color:#57606a}tr:last-child td{border-bottom:0}
.st{display:inline-block;padding:1px 9px;border-radius:999px;border:1px solid;font-size:12.5px;font-weight:600;white-space:nowrap}
${palette(GREEN, '#1a7f37', '#dafbe1')}
${palette(BLUE, '#0969da', '#ddf4ff')}
${palette(GREY, '#57606a', '#eaeef2')}
${palette(AMBER, '#9a6700', '#fff8c5')}
${palette(RED, '#cf222e', '#ffebe9')}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:12px}
.card{background:#fff;border:1px solid #d0d7de;border-left:5px solid #8c959f;border-radius:8px;padding:10px 14px}
.card.up{border-left-color:#1a7f37}.card.down{border-left-color:#cf222e}
.card .name{font-weight:600;word-break:break-all}.card .row{display:flex;gap:6px;margin:6px 0}
.counts{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0 16px}.counts .st{font-size:13.5px;padding:3px 12px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0}dl.facts dt{color:#656d76}dl.facts dd{margin:0}
form.inline{display:inline}form.actions{margin-top:14px}
form.stack{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:10px 14px;align-items:center;max-width:760px}
form.stack .hint{grid-column:2;margin-top:-6px;font-size:13px;color:#656d76}
input[type=text],input[type=password],input[type=number],input[type=search]{width:100%;padding:7px 10px;border:1px solid #d0d7de;border-radius:6px;font:inherit}
button{font:inherit;padding:6px 14px;border-radius:6px;border:1px solid #1f883d;background:#1f883d;color:#fff;cursor:pointer}
button.plain{background:transparent;border-color:#8c959f;color:inherit}button.danger{background:#cf222e;border-color:#cf222e}
.search{display:flex;gap:8px;max-width:620px;margin-bottom:16px}
.flash{padding:10px 14px;border-radius:6px;margin-bottom:16px;border:1px solid}
.flash.error{background:#ffebe9;border-color:#ff818266;color:#82071e}.flash.info{background:#ddf4ff;border-color:#54aeff66}
.signin{max-width:380px;margin:80px auto}.signin form{display:grid;gap:10px}
.pager{display:flex;gap:16px;margin-top:12px}
.live{font-size:13px;color:#656d76}.live.on::before{content:"\\25CF ";color:#1a7f37}
`;
