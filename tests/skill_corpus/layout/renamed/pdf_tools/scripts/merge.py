import sys

from pypdf import PdfWriter

writer = PdfWriter()
for name in sys.argv[2:]:
    writer.append(name)
writer.write(sys.argv[1])
