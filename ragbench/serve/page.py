"""The page at ``/``: paste a token, ask, read the answer with its citations or the refusal and its reason.

Plain HTML and one script served from this origin (``/page.js``), so the page runs under a strict
Content-Security-Policy; answer text is inserted with ``textContent`` (a document's markup is never interpreted).
The token stays in the page (``sessionStorage``); it is sent only as the ``Authorization`` header.
"""
from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)

CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'"

HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ragbench · ask</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:46rem;margin:1.5rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem;margin:0 0 .8rem} label{display:block;font-weight:600;margin:.6rem 0 .2rem}
textarea,input,select{width:100%;box-sizing:border-box;font:inherit;padding:.35rem;
border:1px solid #999;border-radius:4px}
textarea{height:4.2rem;font-family:monospace;font-size:12px} .row{display:flex;gap:.5rem;align-items:end}
.row>div{flex:1} button{font:inherit;padding:.4rem 1.2rem;margin-top:.7rem;cursor:pointer}
#result{margin-top:1rem;padding:.8rem;border-radius:6px;display:none;white-space:pre-wrap}
#result.answer{background:#eef7ee;border:1px solid #8b8} #result.refused{background:#fff6e5;border:1px solid #d9a441}
#result.error{background:#fdecec;border:1px solid #d66} #citations{margin:.4rem 0 0;padding:0;list-style:none}
.meta{color:#666;font-size:12px;margin-top:.5rem}
</style></head>
<body>
<h1>ragbench · grounded answers</h1>
<label for="token">Token (JWT)</label>
<textarea id="token" placeholder="paste a bearer token"></textarea>
<div class="row"><div><label for="question">Question</label>
<input id="question" placeholder="How many days of annual leave do staff get?"></div>
<div style="flex:0 0 8rem"><label for="retriever">Retriever</label>
<select id="retriever"><option value="">default</option><option>bm25</option><option>dense</option>
<option>hybrid</option><option>lsh</option></select></div></div>
<button id="ask">Ask</button>
<div id="result"><div id="status"></div><div id="answer"></div><ol id="citations"></ol>
<div class="meta" id="meta"></div></div>
<script src="/page.js"></script>
</body></html>
"""

SCRIPT = """'use strict';
const $ = (id) => document.getElementById(id);
$('token').value = sessionStorage.getItem('ragbench-token') || '';
function show(kind, status, text, citations, meta) {
  const box = $('result');
  box.className = kind; box.style.display = 'block';
  $('status').textContent = status; $('answer').textContent = text; $('meta').textContent = meta || '';
  const list = $('citations'); list.replaceChildren();
  for (const c of citations || []) {
    const li = document.createElement('li');
    li.textContent = `[${c.marker}] ${c.title} (${c.doc_id})`;
    list.appendChild(li);
  }
}
async function ask() {
  const token = $('token').value.trim();
  sessionStorage.setItem('ragbench-token', token);
  const body = {question: $('question').value};
  if ($('retriever').value) body.retriever = $('retriever').value;
  show('', 'Asking…', '', [], '');
  let res, data;
  try {
    res = await fetch('/v1/ask', {method: 'POST', headers: {'Content-Type': 'application/json',
      'Authorization': 'Bearer ' + token}, body: JSON.stringify(body)});
    data = await res.json();
  } catch (e) { show('error', 'Request failed', String(e), [], ''); return; }
  if (!res.ok) {
    const where = `request ${data.request_id || ''}`;
    show('error', `${data.title || 'Error'} (${res.status})`, data.detail || '', [], where);
    return;
  }
  const meta = `${data.retrieval_mode} · ${data.model_id} · ${data.prompt_version} · request ${data.request_id}`;
  if (data.refused) show('refused', `Refused: ${data.refusal_reason}`, data.answer, [], meta);
  else show('answer', 'Answer', data.answer, data.citations, meta);
}
$('ask').addEventListener('click', ask);
$('question').addEventListener('keydown', (e) => { if (e.key === 'Enter') ask(); });
"""


@router.get("/", response_class=HTMLResponse)
def page() -> HTMLResponse:
    return HTMLResponse(HTML, headers={"Content-Security-Policy": CSP})


@router.get("/page.js")
def script() -> Response:
    return Response(SCRIPT, media_type="text/javascript", headers={"Content-Security-Policy": CSP})
