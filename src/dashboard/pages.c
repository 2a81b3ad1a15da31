/*
 * The dashboard's built-in pages. For now one: the sign-in page at /dashboard/, with its
 * script as a separate asset so the Content-Security-Policy can forbid inline script.
 * Everything is compiled into the binary; nothing is loaded from the internet.
 */
#include <string.h>

#include "dashboard/internal.h"

static const char signin_html[] =
    "<!doctype html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>Sign in · suggestd</title>\n"
    "<link rel=\"stylesheet\" href=\"/dashboard/app.css\">\n"
    "<script src=\"/dashboard/signin.js\" defer></script>\n"
    "</head>\n"
    "<body>\n"
    "<main>\n"
    "<h1>suggestd</h1>\n"
    "<section id=\"signin\">\n"
    "<h2>Sign in</h2>\n"
    "<form id=\"signin-form\">\n"
    "<label for=\"email\">Email</label>\n"
    "<input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" required>\n"
    "<label for=\"password\">Password</label>\n"
    "<input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\" "
    "required>\n"
    "<button type=\"submit\">Sign in</button>\n"
    "<p id=\"error\" role=\"alert\"></p>\n"
    "</form>\n"
    "</section>\n"
    "<section id=\"session\" hidden>\n"
    "<p>Signed in as <strong id=\"who\"></strong> (<span id=\"role\"></span>).</p>\n"
    "<button id=\"sign-out\" type=\"button\">Sign out</button>\n"
    "<button id=\"sign-out-all\" type=\"button\">Sign out everywhere</button>\n"
    "</section>\n"
    "</main>\n"
    "</body>\n"
    "</html>\n";

static const char signin_js[] =
    "'use strict';\n"
    "const $ = (id) => document.getElementById(id);\n"
    "let csrf = null;\n"
    "async function api(method, path, body) {\n"
    "  const headers = {};\n"
    "  if (body !== undefined) headers['Content-Type'] = 'application/json';\n"
    "  if (csrf && method !== 'GET') headers['X-CSRF-Token'] = csrf;\n"
    "  const r = await fetch('/dashboard/api' + path, {method, headers, credentials: "
    "'same-origin',\n"
    "    body: body === undefined ? undefined : JSON.stringify(body)});\n"
    "  return {status: r.status, body: await r.json().catch(() => ({}))};\n"
    "}\n"
    "function show(me) {\n"
    "  $('signin').hidden = !!me;\n"
    "  $('session').hidden = !me;\n"
    "  if (me) {\n"
    "    csrf = me.csrfToken;\n"
    "    $('who').textContent = me.member.email;\n"
    "    $('role').textContent = me.member.role;\n"
    "  } else {\n"
    "    csrf = null;\n"
    "    $('email').focus();\n"
    "  }\n"
    "}\n"
    "async function load() {\n"
    "  const r = await api('GET', '/me');\n"
    "  show(r.status === 200 ? r.body : null);\n"
    "}\n"
    "document.addEventListener('DOMContentLoaded', () => {\n"
    "  $('signin-form').addEventListener('submit', async (e) => {\n"
    "    e.preventDefault();\n"
    "    $('error').textContent = '';\n"
    "    const r = await api('POST', '/session', {email: $('email').value,\n"
    "      password: $('password').value});\n"
    "    $('password').value = '';\n"
    "    if (r.status === 200) show(r.body);\n"
    "    else $('error').textContent = r.body.message || 'Sign-in failed.';\n"
    "  });\n"
    "  $('sign-out').addEventListener('click', async () => {\n"
    "    await api('POST', '/session/sign-out');\n"
    "    show(null);\n"
    "  });\n"
    "  $('sign-out-all').addEventListener('click', async () => {\n"
    "    await api('POST', '/sessions/revoke-all');\n"
    "    show(null);\n"
    "  });\n"
    "  load();\n"
    "});\n";

static const char app_css[] =
    "body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#111;background:#fff}\n"
    "main{max-width:28rem;margin:3rem auto;padding:0 1rem}\n"
    "label{display:block;margin-top:1rem;font-weight:600}\n"
    "input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #555}\n"
    "button{margin-top:1rem;padding:.5rem 1rem;font:inherit;background:#0b57d0;color:#fff;"
    "border:0;cursor:pointer}\n"
    "button:focus-visible,input:focus-visible{outline:3px solid #f4b400;outline-offset:2px}\n"
    "#error{color:#b3261e;min-height:1.5em}\n";

static void page(sg_resp *resp, const char *type, const char *body) {
  resp->status = 200;
  resp->content_type = type;
  sg_buf_puts(&resp->body, body);
  /* Own scripts only, no framing (clickjacking), no referrer leaking paths. */
  sg_resp_header(resp, "Content-Security-Policy",
                 "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                 "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  sg_resp_header(resp, "X-Frame-Options", "DENY");
  sg_resp_header(resp, "Referrer-Policy", "no-referrer");
}

bool sg__dashboard_page(sg_req *req, sg_resp *resp) {
  if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) return false;
  if (strcmp(req->path, "/dashboard") == 0) {
    resp->status = 308;
    sg_resp_header(resp, "Location", "/dashboard/");
    return true;
  }
  if (strcmp(req->path, "/dashboard/") == 0)
    page(resp, "text/html; charset=utf-8", signin_html);
  else if (strcmp(req->path, "/dashboard/signin.js") == 0)
    page(resp, "text/javascript; charset=utf-8", signin_js);
  else if (strcmp(req->path, "/dashboard/app.css") == 0)
    page(resp, "text/css; charset=utf-8", app_css);
  else
    return false;
  return true;
}
