#!/usr/bin/env python3
"""Every relative link of README.md and doc/ (doc/performance/ included) leads to a file
that exists and, for a page, to a heading or an <a id> it has (GitHub's anchors: the
heading lowercased, punctuation dropped, spaces as hyphens). Issue #60: the performance
pages were split and every link into them must keep working.

    check_doc_links.py SOURCE_DIR

Standard library only.
"""
import glob
import os
import re
import sys
import unicodedata

os.chdir(sys.argv[1])
def slug(t): return "".join(ch for ch in t.lower() if ch in " -_" or unicodedata.category(ch)[0] in "LN").replace(" ","-")
def anchors(path):
    s=open(path,encoding="utf-8").read(); out=set(); fence=False
    for l in s.split("\n"):
        if l.startswith("```"): fence=not fence
        if not fence and re.match(r"#{1,6} ",l):
            base=slug(l.lstrip("#").strip()); a=base; k=1
            while a in out: a="%s-%d"%(base,k); k+=1
            out.add(a)
    out|=set(re.findall(r'<a id="([^"]+)"',s))
    return out
bad=0
for f in sorted(glob.glob("doc/*.md")+glob.glob("doc/performance/*.md")+["README.md"]):
    s=open(f,encoding="utf-8").read()
    for m in re.finditer(r"\]\(([^)\s]+)\)",s):
        t=m.group(1)
        if re.match(r"^[a-z]+:",t): continue
        path,_,anc=t.partition("#")
        target=os.path.normpath(os.path.join(os.path.dirname(f),path)) if path else f
        if not os.path.exists(target):
            print(f,"->",t,"(no file)"); bad+=1; continue
        if anc and target.endswith(".md") and anc not in anchors(target):
            print(f,"->",t,"(no anchor)"); bad+=1
print(bad, "bad links")
sys.exit(1 if bad else 0)
