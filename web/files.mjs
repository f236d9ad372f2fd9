// @ts-check
// Opening local session logs: the file picker and drag-and-drop anywhere on the page. The File object goes to
// the worker as is (it reads it in slices itself); nothing here reads the file on the main thread.

/**
 * @param {{button: HTMLElement, input: HTMLInputElement, overlay: HTMLElement, onFile: (file: File) => void}} parts
 */
export function initFiles({ button, input, overlay, onFile }) {
  button.addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    const file = input.files && input.files[0];
    if (file) onFile(file);
    input.value = "";
  });

  let depth = 0;
  const hasFiles = (/** @type {DragEvent} */ event) => [...(event.dataTransfer?.types || [])].includes("Files");
  document.addEventListener("dragenter", (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth += 1;
    overlay.hidden = false;
  });
  document.addEventListener("dragover", (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
  });
  document.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) overlay.hidden = true;
  });
  document.addEventListener("drop", (event) => {
    event.preventDefault();
    depth = 0;
    overlay.hidden = true;
    const file = event.dataTransfer?.files?.[0];
    if (file) onFile(file);
  });
}
