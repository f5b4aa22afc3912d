/* The page's requests to the JSON API: same-origin, with the CSRF token; a refusal is a result for the status line,
 * never an exception. A leaf module: the facts form, the inspector and the overseer's actions all ask through it.
 */
import { container, state } from "./util.js";
import { emit } from "./model.js";
import { setStatusLine } from "./status.js";

function csrfToken() {
  const cookie = document.cookie.split(";").map((c) => c.trim()).find((c) => c.startsWith("csrftoken="));
  if (cookie) return decodeURIComponent(cookie.slice("csrftoken=".length));
  const input = container.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

// {ok, status, data, message}: a refusal is a message for the status line, never an exception.
export { request };
async function request(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (method !== "GET") {
    init.headers["Content-Type"] = "application/json";
    init.headers["X-CSRFToken"] = csrfToken();
    init.body = JSON.stringify(body || {});
  }
  let response;
  try {
    response = await fetch("/api/" + path, init);
  } catch (error) {
    return { ok: false, status: 0, data: null, message: "Could not reach the server; try again." };
  }
  const data = await response.json().catch(() => null);
  const message = response.ok ? "" : errorText(response.status, data);
  return { ok: response.ok, status: response.status, data, message };
}

function errorText(status, data) {
  const detail = data && data.detail;
  if (typeof detail === "string" && detail) return detail;
  if (Array.isArray(detail) && detail.length) {
    return detail.map((e) => (e && e.field ? `${e.field}: ${e.message}` : String((e && e.message) || e))).join("; ");
  }
  if (status === 403) return "You may only watch this session.";
  return `The server refused that (HTTP ${status}).`;
}

// One action: the button stays disabled while its request is in flight; the outcome goes to the status line.
export async function perform(button, path, body, pendingText, doneText) {
  if (!state.canAct || (button && button.disabled)) return null;
  if (button) button.disabled = true;
  setStatusLine(pendingText, "info");
  const result = await request("POST", path, body);
  if (button) button.disabled = false;
  if (result.ok) setStatusLine(doneText, "ok");
  else refused(result);
  return result.ok ? result : null;
}

export function refused(result) {
  setStatusLine(result.message, "error");
  if (result.status === 403) { state.canAct = false; emit("view-only"); }
}

