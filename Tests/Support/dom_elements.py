"""Reads an HTML document (a DOM that headless Chromium dumped) with Python's html.parser and
prints its elements as JSON, in document order: tag, attributes and text content, so tests can
query the page by id, tag or attribute without a parser of our own."""
import json
import sys
from html.parser import HTMLParser

# Elements that never have content or an end tag.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Elements(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.open = []

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attributes": {name: value or "" for name, value in attrs}, "text": ""}
        self.elements.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_startendtag(self, tag, attrs):
        self.elements.append({"tag": tag, "attributes": {name: value or "" for name, value in attrs}, "text": ""})

    def handle_endtag(self, tag):
        for index in range(len(self.open) - 1, -1, -1):
            if self.open[index]["tag"] == tag:
                del self.open[index:]
                return

    def handle_data(self, data):
        for element in self.open:
            element["text"] += data


def main():
    with open(sys.argv[1], encoding="utf-8") as document:
        parser = Elements()
        parser.feed(document.read())
        parser.close()
    json.dump(parser.elements, sys.stdout)


main()
