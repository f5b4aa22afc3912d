/* The status line under the header: what an action is doing, did, or why it was refused. A leaf module, so every
 * module that reports (the socket, the facts form, the overseer's actions, the export) can without importing a view.
 */
import { $, OK_MESSAGE_MS, setText } from "./util.js";

let statusTimer = null;
export function setStatusLine(text, tone) {
  clearTimeout(statusTimer);
  setText("status-line", text);
  $("status-line").dataset.tone = tone || "";
  if (text && tone === "ok") statusTimer = setTimeout(() => setStatusLine(""), OK_MESSAGE_MS);
};
