extension WebPage {
    /// The pages' one stylesheet, inline: the system's own font, a single column that fits a
    /// 360 px phone, tap targets of at least 48 px, and dark colours when the phone asks for them.
    static let style: HTML = """
        :root{--paper:#f4f5f7;--card:#fff;--ink:#16181d;--muted:#5d6470;--line:#e3e6eb;--accent:#2f5fd0;--accent-ink:#fff;\
        --soft:#eef2fb;color-scheme:light dark}
        @media (prefers-color-scheme:dark){:root{--paper:#0e1013;--card:#181b20;--ink:#eef0f3;--muted:#a3a9b4;--line:#2a2f37;\
        --accent:#6f9bff;--accent-ink:#0b1020;--soft:#1f2633}}
        *{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
        body{margin:0;min-height:100vh;background:var(--paper);color:var(--ink);\
        font:17px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;\
        display:flex;flex-direction:column;align-items:center;padding:24px 16px;overflow-wrap:break-word}
        main{width:100%;max-width:440px;background:var(--card);border:1px solid var(--line);border-radius:20px;padding:28px 22px 24px}
        .brand{display:flex;align-items:center;gap:12px;margin-bottom:22px;font-weight:600;font-size:17px}
        .mark{flex:none;width:44px;height:44px;border-radius:12px;display:grid;place-items:center;font-size:22px;font-weight:700;\
        color:#fff;background:linear-gradient(135deg,#4f7dea,#2a4fb0)}
        h1{font-size:26px;line-height:1.2;margin:0 0 10px;letter-spacing:-0.01em}
        h2{font-size:15px;margin:0 0 10px;color:var(--muted);font-weight:600}
        p{margin:0 0 16px}
        .lead{color:var(--muted)}
        .button{display:flex;flex-direction:column;align-items:center;justify-content:center;min-height:52px;padding:10px 16px;\
        border-radius:14px;text-decoration:none;font-weight:600;font-size:17px;text-align:center}
        .primary{background:var(--accent);color:var(--accent-ink);margin:22px 0 4px}
        .primary:active{filter:brightness(0.92)}
        section{border-top:1px solid var(--line);margin-top:24px;padding-top:20px}
        .store-row{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:10px}
        .store{background:var(--ink);color:var(--card);line-height:1.15}
        .store small{font-size:11px;font-weight:500;opacity:0.8}
        .hint{font-size:14px;color:var(--muted);margin:12px 0 0}
        .copy{display:block;padding:12px 14px;border-radius:12px;background:var(--soft);color:var(--ink);\
        font:14px/1.45 ui-monospace,"SF Mono",Menlo,Consolas,monospace;word-break:break-all;text-decoration:none;-webkit-user-select:all;user-select:all}
        .elsewhere p{font-size:15px;color:var(--muted);margin-bottom:12px}
        .address{font-weight:600;color:var(--ink)}
        a{color:var(--accent)}
        .spinner{width:28px;height:28px;border-radius:50%;border:3px solid var(--line);border-top-color:var(--accent);\
        margin:4px 0 18px;animation:spin 0.9s linear infinite}
        @keyframes spin{to{transform:rotate(360deg)}}
        @media (prefers-reduced-motion:reduce){.spinner{animation:none}}
        footer{max-width:440px;width:100%;text-align:center;color:var(--muted);font-size:14px;margin-top:18px}
        """
}
