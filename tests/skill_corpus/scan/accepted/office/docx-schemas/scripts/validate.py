"""Check that a .docx holds [Content_Types].xml and a main document part."""
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as package:
    names = set(package.namelist())
missing = {"[Content_Types].xml", "word/document.xml"} - names
print("ok" if not missing else f"missing: {', '.join(sorted(missing))}")
