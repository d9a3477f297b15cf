"""The 50,000-item scale catalog and its labelled noisy titles: bench/resolve.py's ground truth.

Built on the fake web's world (:mod:`rareindex_fakeweb.sites`): :mod:`.catalog` grows its items
into a catalog of any size, :mod:`.items` and :mod:`.names` make the items, :mod:`.noise` dresses
titles the way real listings write them.
"""
