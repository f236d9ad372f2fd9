import time, shutil
def test_word(viewer):
    for name in ("word100k.jsonl", "word1m.jsonl"):
        shutil.copy(f"/tmp/{name}", viewer.served.files / name)
        t = time.time()
        r = viewer.open_file(f"/__test__/{name}")
        t1 = time.time()
        h = viewer.page.evaluate("() => { const t0 = performance.now(); const h = document.body.getBoundingClientRect().height; return [performance.now()-t0, h, document.documentElement.scrollWidth, innerWidth]; }")
        print(name, "open", round(t1 - t, 2), "layout", h, r.get("ms"), flush=True)
        t = time.time()
        txt = viewer.render_all()
        print(name, "render_all", round(time.time() - t, 2), len(txt), flush=True)
