import sys

from shop.prices import gross

print(gross(int(sys.argv[1])))
