/**
 * The explorer's stylesheet, served as `/explorer/style.css`. System fonts only (nothing fetched
 * from outside). One column on a phone; wide tables keep to the screen by fixed layout and
 * ellipsis, and lose their less useful columns (`.wide`) below 640 px, so nothing scrolls sideways.
 */
export const STYLESHEET = `
:root {
  --bg: #f6f7f9; --card: #fff; --ink: #1d2330; --muted: #667085; --line: #e3e6eb;
  --accent: #2856c9; --accent-soft: #e8eefc; --ok: #137a3a; --warn: #b54708; --bad: #b42318;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #11151c; --card: #19202a; --ink: #e6e9ef; --muted: #98a2b3; --line: #2a3340; --accent: #7aa2ff; --accent-soft: #1e2a44; }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; overflow-wrap: anywhere; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, .mono { font-family: var(--mono); font-size: 0.92em; }
.top { background: var(--card); border-bottom: 1px solid var(--line); }
.bar { max-width: 1200px; margin: 0 auto; padding: 10px 16px; display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: center; }
.brand { font-weight: 700; font-size: 18px; color: var(--ink); white-space: nowrap; }
.brand span { color: var(--accent); font-weight: 600; }
.search { flex: 1 1 320px; display: flex; gap: 6px; min-width: 0; }
.lookup { display: flex; gap: 6px; min-width: 0; margin: 0 0 10px; }
.search input, .lookup input { flex: 1; min-width: 0; padding: 8px 10px; border: 1px solid var(--line); border-radius: 8px; background: var(--bg); color: var(--ink); font: inherit; }
.search button, .lookup button, button.btn { padding: 8px 14px; border: 0; border-radius: 8px; background: var(--accent); color: #fff; font: inherit; cursor: pointer; }
button.btn[disabled] { opacity: 0.45; cursor: default; }
.nav { max-width: 1200px; margin: 0 auto; padding: 0 16px 8px; display: flex; flex-wrap: wrap; gap: 4px 18px; align-items: center; font-size: 14px; }
.live { margin-left: auto; font-size: 13px; color: var(--muted); }
.live::before { content: ""; display: inline-block; width: 8px; height: 8px; margin-right: 6px; border-radius: 50%; background: var(--muted); vertical-align: 1px; }
.live.on { color: var(--ok); }
.live.on::before { background: var(--ok); }
.live.off::before { background: var(--warn); }
main { max-width: 1200px; margin: 0 auto; padding: 16px; }
h1 { font-size: 22px; margin: 4px 0 14px; overflow-wrap: anywhere; }
h2 { font-size: 17px; margin: 0 0 10px; }
.muted { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 14px 16px; margin-bottom: 16px; min-width: 0; }
.grid2 { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; }
/* the home page's transactions have six columns to the blocks' five narrow ones */
.grid2.more-right { grid-template-columns: minmax(0, 2fr) minmax(0, 3fr); }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin-bottom: 16px; }
.figure { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 10px 12px; min-width: 0; }
.figure .label { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); }
.figure .value { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.figure .sub { font-size: 12px; color: var(--muted); }
table { width: 100%; border-collapse: collapse; table-layout: fixed; font-size: 14px; }
th, td { text-align: left; padding: 7px 6px; border-bottom: 1px solid var(--line); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.fresh td { animation: fresh 2s ease-out; }
@keyframes fresh { from { background: var(--accent-soft); } to { background: transparent; } }
dl.kv { display: grid; grid-template-columns: minmax(120px, max-content) minmax(0, 1fr); gap: 6px 16px; margin: 0; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; min-width: 0; overflow-wrap: anywhere; word-break: break-word; }
pre { margin: 0; padding: 10px; background: var(--bg); border-radius: 8px; white-space: pre-wrap; overflow-wrap: anywhere; font-family: var(--mono); font-size: 13px; }
.tag { display: inline-block; padding: 1px 8px; border-radius: 999px; background: var(--accent-soft); color: var(--accent); font-size: 12px; font-weight: 600; }
th.type { width: 13em; }
/* a type badge is never cut: it breaks after an underscore (<wbr>) when its column is narrow */
td.type { white-space: normal; overflow: visible; text-overflow: clip; }
td .tag { overflow-wrap: normal; vertical-align: middle; line-height: 1.3; }
/* a table shows the end of an id (what tells ids apart), the copy button gives the whole */
th.txid { width: 10em; }
.id { display: inline-flex; align-items: center; gap: 4px; max-width: 100%; }
.id a { min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
/* two overlapping squares drawn in CSS: no icon font, no glyph a system may lack */
button.copy { flex: none; position: relative; width: 16px; height: 16px; padding: 0; border: 0; background: none; color: var(--muted); cursor: pointer; }
button.copy::before, button.copy::after { content: ""; position: absolute; width: 8px; height: 9px; border: 1.5px solid currentColor; border-radius: 2px; background: var(--card); }
button.copy::before { left: 2px; top: 2px; }
button.copy::after { left: 5px; top: 5px; }
button.copy:hover { color: var(--accent); }
button.copy.copied { color: var(--ok); }
.username { font-weight: 600; }
.tag.bad { background: #fde8e7; color: var(--bad); }
.tag.ok { background: #e6f4ea; color: var(--ok); }
td.wrap { white-space: normal; overflow-wrap: anywhere; }
th.logseq { width: 4em; }
th.logtx { width: 12em; }
th.logblock { width: 6em; }
th.short { width: 6.5em; }
th.amount { width: 9em; }
.notfound { border-left: 4px solid var(--bad); }
.pager { display: flex; gap: 8px; align-items: center; margin: 10px 0 12px; flex-wrap: wrap; }
.post { padding: 10px 0; border-bottom: 1px solid var(--line); }
.post:last-child { border-bottom: 0; }
.post .text { white-space: pre-wrap; margin: 4px 0; }
.post .meta { font-size: 13px; color: var(--muted); }
.content { white-space: pre-wrap; font-size: 17px; margin: 0 0 12px; }
/* sized to the screen, whatever the photo: the likes under it stay in the first screen */
.attachment { display: block; max-width: 100%; max-height: 55vh; width: auto; height: auto; object-fit: contain; border-radius: 10px; border: 1px solid var(--line); }
.post-stats { margin: 8px 0; color: var(--muted); }
.tags { display: flex; flex-wrap: wrap; gap: 6px; }
.foot { max-width: 1200px; margin: 0 auto; padding: 8px 16px 24px; color: var(--muted); font-size: 13px; }
@media (max-width: 640px) {
  .grid2, .grid2.more-right { grid-template-columns: minmax(0, 1fr); }
  .wide { display: none; }
  main { padding: 12px; }
  .card { padding: 12px; }
  dl.kv { grid-template-columns: minmax(0, 1fr); gap: 2px; }
  dl.kv dd { margin-bottom: 8px; }
  .figure .value { font-size: 18px; }
  .live { margin-left: 0; }
  th.type { width: 8.6em; }
  th.logtx { width: 8.5em; }
  th.txid { width: 9.5em; }
  .attachment { max-height: 45vh; }
  th.logblock { width: 4.5em; }
  th.short { width: 5.6em; }
  th.amount { width: 6.5em; }
  td .tag { font-size: 11px; padding: 1px 6px; }
}
`
