// The dashboard's one stylesheet and one script, bundled into the Lambda as strings (no CDN, no build step).
// The stylesheet is hand-written (docs/dashboard.md says why): a shell (sidebar, top bar, page header, tabs),
// cards, badges with colour and text, one input height, tables that become cards below 40rem.
// The script only wires copy buttons: every page works without it.

const CSS = `/* Sendflow dashboard: hand-written, no framework (docs/dashboard.md, "How it is built"). */
:root{--bg:#f5f6f8;--card:#fff;--line:#dde1e6;--text:#1b1f24;--muted:#555e69;--accent:#0b57d0;--accent-weak:#e8f0fe;--bad:#b3261e;--h:2.5rem;--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--text);background:var(--bg)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
p a,li a,dd a,.flash a,.back a{text-decoration:underline}
.side-nav a,.menu nav a,.tabs a{text-decoration:none}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible,[tabindex]:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:20}
.visually-hidden{position:absolute!important;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.shell{min-height:100vh;display:grid;grid-template-columns:14.5rem minmax(0,1fr);grid-template-rows:auto 1fr;grid-template-areas:"side top" "side main"}
.sidebar{grid-area:side;background:#fff;border-right:1px solid var(--line);padding:1rem .75rem;position:sticky;top:0;height:100vh;overflow-y:auto}
.brand{display:block;font-weight:700;font-size:1.15rem;color:var(--text);padding:.25rem .6rem .9rem;margin:0}
.side-nav ul,.menu ul{list-style:none;margin:0;padding:0;display:grid;gap:2px}
.side-nav a,.menu nav a{display:block;padding:.4rem .6rem;border-radius:6px;color:var(--text)}
.side-nav a:hover,.menu nav a:hover{background:#eef1f4;text-decoration:none}
.side-nav a[aria-current=page],.menu nav a[aria-current=page]{background:var(--accent-weak);color:#0842a0;font-weight:600}
.topbar{grid-area:top;position:relative;display:flex;align-items:center;flex-wrap:wrap;gap:.5rem 1rem;padding:.5rem 1.5rem;background:#fff;border-bottom:1px solid var(--line)}
.mode-test .topbar{box-shadow:inset 0 3px 0 #d97706}
.brand-top,.menu{display:none}
.account{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem .75rem;margin-left:auto;font-size:.875rem;color:var(--muted)}
.account .mono{color:var(--text)}
main{grid-area:main;padding:1.25rem 1.5rem 3rem;width:100%;max-width:72rem;min-width:0}
main.bare{max-width:34rem;margin:2rem auto;padding:1rem}
.page-head{display:flex;flex-wrap:wrap;align-items:flex-end;justify-content:space-between;gap:.75rem 1rem;margin:0 0 1rem}
.page-title{min-width:0;max-width:100%}
h1{font-size:1.5rem;line-height:1.25;margin:0}h2{font-size:1.1rem;margin:1.25rem 0 .6rem}h3{font-size:1rem;margin:1rem 0 .5rem}
.back{margin:0 0 .25rem;font-size:.875rem}
.page-actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.tabs{margin:0 0 1rem;border-bottom:1px solid var(--line)}
.tabs ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;column-gap:.25rem}
.tabs a{display:block;padding:.5rem .75rem;color:var(--muted);border-bottom:2px solid transparent;margin-bottom:-1px;white-space:nowrap}
.tabs a:hover{color:var(--text);text-decoration:none}
.tabs a[aria-current=page]{color:var(--text);border-bottom-color:var(--accent);font-weight:600}
.page-body>section,.page-body>.table-wrap,.page-body>dl.facts,.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem;margin:0 0 1rem;min-width:0}
.page-body>section>h2:first-child,.card>h2:first-child,.card>h1:first-child{margin-top:0}
.page-body>p{margin:0 0 1rem}
section.disabled{border-color:#ffcecb;background:#fffafa}
.inline{display:inline}
label{display:block;font-weight:600;margin:0}
form.stack{max-width:36rem}form.stack>*{margin:0}form.stack>*+*{margin-top:.9rem}
form.stack>label+input,form.stack>label+select,form.stack>label+textarea,form.stack>input+p.hint,form.stack>select+p.hint,.field>label+input,.field>label+select{margin-top:.3rem}
fieldset{border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem .75rem;margin:0;min-width:0}
legend{font-weight:600;padding:0 .25rem}
fieldset label{display:inline-flex;gap:.4rem;align-items:center;margin:.2rem 1rem .2rem 0;font-weight:400}
input:not([type=checkbox]):not([type=radio]):not([type=hidden]),select{display:block;width:100%;max-width:100%;height:var(--h);padding:0 .65rem;font:inherit;color:inherit;background:#fff;border:1px solid #8c959f;border-radius:6px}
textarea{display:block;width:100%;font:inherit;padding:.5rem .65rem;border:1px solid #8c959f;border-radius:6px}
input[type=checkbox],input[type=radio]{width:1rem;height:1rem;margin:0}
button,a.button{display:inline-flex;align-items:center;justify-content:center;min-height:var(--h);padding:0 1rem;font:inherit;font-weight:600;line-height:1.2;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none;white-space:nowrap}
button.secondary,a.button.secondary{background:#fff;color:var(--accent);border-color:#b9c1cb}
button.secondary:hover,a.button.secondary:hover{background:#f3f6fb}
button.danger,a.button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
button.small,a.button.small{min-height:2rem;padding:0 .7rem;font-size:.85rem}
.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end;margin:0 0 1rem}.filters .field{flex:1 1 12rem;min-width:0}.filters .field:last-child{flex:none}
ol.timeline{margin:0;padding-left:1.25rem}ol.timeline li{margin:.2rem 0}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.75rem 0}
.actions label{display:inline}.actions select,.actions input:not([type=checkbox]){width:auto;display:inline-block}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.925rem}
th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}
thead th{font-size:.8rem;color:var(--muted);font-weight:600;background:#f8f9fb;white-space:nowrap}
tbody tr:last-child>*{border-bottom:0}
caption{text-align:left;font-weight:600;padding:0 0 .5rem}
code,pre,.mono{font-family:var(--mono);font-size:.875em}
pre{white-space:pre-wrap;overflow-wrap:break-word;background:#f6f8fa;border:1px solid var(--line);padding:.75rem;border-radius:6px;max-width:100%;overflow-x:auto}
pre.code{white-space:pre;overflow-wrap:normal}
td,th,dd,p,li,h1,h2,.flash,.field-error{overflow-wrap:break-word}
.when,.token,.badge,.health{white-space:nowrap}
.dns-name code,.dns-value code{overflow-wrap:break-word}
.dns-name,.dns-value{display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:baseline}
dl.facts{display:grid;grid-template-columns:minmax(7rem,max-content) minmax(0,1fr);gap:.45rem 1.25rem}
dl.facts dt{font-weight:600;color:var(--muted)}dl.facts dd{margin:0;min-width:0}
dl.headers{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:0 1rem;margin:.25rem 0}dl.headers dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-flex;align-items:center;gap:.35em;padding:0 .55rem;border-radius:999px;font-size:.8rem;font-weight:600;line-height:1.6;border:1px solid transparent;vertical-align:baseline}
.badge::before{content:"";flex:none;width:.5em;height:.5em;border-radius:50%;background:currentColor}
.tone-ok{color:#116329;background:#dafbe1;border-color:#aceebb}
.tone-bad{color:#a40e26;background:#ffebe9;border-color:#ffcecb}
.tone-warn{color:#6f4400;background:#fff8c5;border-color:#eed888}
.tone-info{color:#0a4bb3;background:#e8f0fe;border-color:#c6d8fb}
.tone-neutral{color:#424a53;background:#eff2f5;border-color:#d6dbe1}
ul.tags{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:.35rem}
p.hint{margin:.3rem 0 0;font-size:.875rem;color:var(--muted)}
p.field-error{margin:.3rem 0 0;color:var(--bad);font-weight:600}
[aria-invalid=true]{border-color:var(--bad)!important;box-shadow:0 0 0 1px var(--bad)}
iframe.preview{display:block;width:100%;height:24rem;border:1px solid var(--line);border-radius:6px;background:#fff}
progress{vertical-align:middle;max-width:100%}
summary{cursor:pointer}
.flash{padding:.75rem 1rem;border-radius:8px;margin:0 0 1rem;border:1px solid}.flash p{margin:.2rem 0}
.flash.notice{background:#e9f9ee;border-color:#4ac26b}.flash.error{background:#fff0ee;border-color:#cf222e}
.secret{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}.secret code{min-width:0;overflow-wrap:anywhere}
@media (max-width:48rem){
.shell{grid-template-columns:minmax(0,1fr);grid-template-areas:"top" "main"}
.sidebar{display:none}
.topbar{padding:.5rem 1rem}
.brand-top{display:block;padding:0}
.menu{display:block;margin-left:auto}
.menu summary{list-style:none;display:inline-flex;align-items:center;min-height:2.25rem;padding:0 .8rem;border:1px solid #b9c1cb;border-radius:6px;font-weight:600;color:var(--accent)}
.menu summary::-webkit-details-marker{display:none}
.menu nav{position:absolute;left:0;right:0;top:100%;z-index:10;background:#fff;border-bottom:1px solid var(--line);padding:.5rem 1rem;box-shadow:0 6px 12px rgba(0,0,0,.08)}
.account{margin-left:0;width:100%}
main{padding:1rem}
h1{font-size:1.3rem}
.account .small{padding:0 .55rem}
.page-body>section,.page-body>.table-wrap,.page-body>dl.facts,.card{padding:.85rem}
}
@media (max-width:40rem){
dl.facts,dl.headers{grid-template-columns:minmax(0,1fr)}dl.facts dd+dt{margin-top:.35rem}
table.data,table.data>tbody,table.data>tbody>tr{display:block;width:100%}
table.data>thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.data>caption{display:block}
table.data>tbody>tr{border:1px solid var(--line);border-radius:8px;padding:.3rem .75rem;margin:0 0 .6rem;background:#fff}
table.data>tbody>tr>*{display:flow-root;width:100%;padding:.3rem 0 .3rem 7rem;border:0}
table.data>tbody>tr>*::before{content:attr(data-label);float:left;width:6.5rem;margin-left:-7rem;font-size:.8rem;line-height:1.9;font-weight:600;color:var(--muted);overflow-wrap:break-word}
}
.chart{margin:1rem 0}.chart svg{display:block;max-width:100%;height:auto}.chart figcaption{font-weight:600;margin-bottom:.25rem}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.5rem 0;padding:0;font-size:.875rem}.legend li{display:inline-flex;align-items:center;gap:.35rem}
.sparkline{display:block;vertical-align:middle}
`;

const JS = `// Copy buttons: <button data-copy="ID"> copies the text of the element with that id.
document.addEventListener('click', function (event) {
  var button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  var source = document.getElementById(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    button.textContent = 'Copied';
  });
});
`;

export const ASSETS: Readonly<Record<string, { type: string; body: string }>> = {
  'assets/app.css': { type: 'text/css; charset=utf-8', body: CSS },
  'assets/app.js': { type: 'text/javascript; charset=utf-8', body: JS },
};
