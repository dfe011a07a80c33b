// The dashboard's one stylesheet and one script, bundled into the Lambda as strings (no CDN, no build step).
// The script only wires copy buttons: every page works without it.

const CSS = `*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#fff}
a{color:#0b57d0}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:1}
header{border-bottom:1px solid #ccc;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
header .brand{font-weight:700;margin-right:auto}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
nav a[aria-current=page]{font-weight:700;text-decoration:none;color:#1a1a1a}
main{max-width:60rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
.inline{display:inline}
form.stack{display:grid;gap:.75rem;max-width:36rem}
fieldset{border:1px solid #ccc;padding:.5rem .75rem;min-width:0}
fieldset label{display:inline-flex;gap:.35rem;margin:.15rem .75rem .15rem 0;align-items:center}
label{font-weight:600}fieldset label{font-weight:400}
input[type=text],input[type=url],input[type=email],input[type=datetime-local],select,textarea{display:block;width:100%;max-width:100%;font:inherit;padding:.4rem;border:1px solid #767676;border-radius:4px}
button{font:inherit;padding:.4rem .8rem;border:1px solid #0b57d0;background:#0b57d0;color:#fff;border-radius:4px;cursor:pointer}
button.secondary{background:#fff;color:#0b57d0}button.danger{background:#b3261e;border-color:#b3261e}
a.button{display:inline-block;padding:.4rem .8rem;border:1px solid #0b57d0;border-radius:4px;text-decoration:none}a.button.danger{background:#b3261e;border-color:#b3261e;color:#fff}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0}.actions select,.actions input{width:auto;display:inline-block}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
caption{text-align:left;font-weight:600;padding:.25rem 0}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:break-word}
pre{white-space:pre-wrap;background:#f4f4f4;padding:.75rem;border-radius:4px;max-width:100%;overflow-x:auto}
td,dd,p,li{overflow-wrap:break-word}
.token,.badge,.health{white-space:nowrap}.dns-name code{overflow-wrap:normal}.dns-value code,td.url{overflow-wrap:anywhere}
dl.headers{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:0 1rem;margin:.25rem 0}dl.headers dd{margin:0;overflow-wrap:anywhere}
.health-failing,.health-disabled{color:#b3261e;border-color:#b3261e}.health-healthy{color:#1b5e20;border-color:#1b5e20}
p.hint{margin:0;font-size:.9em;color:#555}
p.field-error{margin:.15rem 0 0;color:#b3261e;font-weight:600}[aria-invalid=true]{border-color:#b3261e;outline:1px solid #b3261e}
iframe.preview{width:100%;height:24rem;border:1px solid #ccc;background:#fff}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.facts dt{font-weight:600}dl.facts dd{margin:0;min-width:0}
.flash{padding:.75rem;border-radius:4px;margin:0 0 1rem;border:1px solid}
.flash.notice{background:#e8f5e9;border-color:#2e7d32}.flash.error{background:#fdecea;border-color:#b3261e}
.flash{overflow-wrap:anywhere}.secret{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}.secret code{min-width:0}
.badge{display:inline-block;padding:0 .4rem;border-radius:4px;border:1px solid #767676;font-size:.85em}
.status-failed{color:#b3261e}.status-succeeded{color:#1b5e20}
.mode-live{background:#fff}.mode-test{background:#fffbe6}
@media (max-width:40rem){dl.facts,dl.headers{grid-template-columns:1fr}th,td{padding:.3rem}}
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
