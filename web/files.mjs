// @ts-check
// Opening local session logs: the file picker (one file; several are listed as a folder is), the folder picker
// (<input webkitdirectory>) and drag and drop anywhere on the page (a file, several files or a folder:
// DataTransferItem.webkitGetAsEntry walks a dropped folder). File objects go to the worker as they are (it reads
// them in slices itself); nothing here reads a file on the main thread. A folder is handed over as its files with
// their paths in it (the folder's name first).

/**
 * A file of a folder and its path in the folder ("projects/-src-app/abc.jsonl").
 * @typedef {{file: File, path: string}} FolderFile
 */

/**
 * Every file under a dropped directory entry, with its path (the entry's fullPath without the leading "/").
 * readEntries answers in batches: it is called until it answers none.
 * @param {FileSystemEntry} entry
 * @returns {Promise<FolderFile[]>}
 */
export async function walkEntry(entry) {
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => /** @type {FileSystemFileEntry} */ (entry).file(resolve, reject));
    return [{ file: /** @type {File} */ (file), path: entry.fullPath.replace(/^\/+/, "") }];
  }
  if (!entry.isDirectory) return [];
  const reader = /** @type {FileSystemDirectoryEntry} */ (entry).createReader();
  /** @type {FolderFile[]} */
  const out = [];
  for (;;) {
    /** @type {FileSystemEntry[]} */
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) break;
    for (const child of batch) out.push(...await walkEntry(child));
  }
  return out;
}

/**
 * What a drop holds: one file, or a folder (several files, or a directory walked).
 * @param {DataTransfer} transfer
 * @returns {Promise<{file: File} | {name: string, files: FolderFile[]} | null>}
 */
export async function dropped(transfer) {
  const entries = [...transfer.items]
    .map((item) => (item.kind === "file" && item.webkitGetAsEntry ? item.webkitGetAsEntry() : null))
    .filter((e) => e !== null);
  const dirs = entries.filter((e) => e.isDirectory);
  if (dirs.length) {
    /** @type {FolderFile[]} */
    const files = [];
    for (const entry of entries) files.push(...await walkEntry(entry)); // the entries are read before awaiting
    return { name: dirs.length === 1 && entries.length === 1 ? dirs[0].name : "Dropped files", files };
  }
  const list = [...transfer.files];
  if (list.length === 1) return { file: list[0] };
  if (list.length > 1) return { name: "Dropped files", files: list.map((file) => ({ file, path: file.name })) };
  return null;
}

/**
 * @param {{button: HTMLElement, input: HTMLInputElement, folderButton: HTMLElement, folderInput: HTMLInputElement,
 *   overlay: HTMLElement, onFile: (file: File) => void, onFolder: (name: string, files: FolderFile[]) => void}} parts
 */
export function initFiles({ button, input, folderButton, folderInput, overlay, onFile, onFolder }) {
  button.addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    const picked = [...(input.files || [])];
    input.value = "";
    // Several files picked at once are listed as a folder is (each its own row: open, compare), as a drop of them is.
    if (picked.length === 1) onFile(picked[0]);
    else if (picked.length > 1) onFolder("Picked files", picked.map((file) => ({ file, path: file.name })));
  });
  folderButton.addEventListener("click", () => folderInput.click());
  folderInput.addEventListener("change", () => {
    const files = [...(folderInput.files || [])].map((file) => ({ file, path: file.webkitRelativePath || file.name }));
    folderInput.value = "";
    if (!files.length) return;
    onFolder(files[0].path.split("/")[0] || "Folder", files);
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
    if (!event.dataTransfer) return;
    void dropped(event.dataTransfer).then((what) => {
      if (!what) return;
      if ("file" in what) onFile(what.file);
      else onFolder(what.name, what.files);
    });
  });
}
